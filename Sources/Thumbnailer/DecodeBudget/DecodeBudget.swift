import Foundation

/// The memory libvips may hold for decoding, shared by all the process's
/// libvips work: every ``Thumbnailer`` (the server's, the demo origin's
/// painter) asks it with a job's estimate (``DecodeCost``) and the job waits
/// until the estimate fits; what can never fit is refused before it takes a
/// worker. The decisions are ``DecodeAdmission``'s, under this one lock.
///
/// A job asks once a worker has taken it, and the worker waits: only jobs
/// decoding hold the budget, never jobs queued for a worker (a queue of
/// pre-warm's jobs admitted ahead of time would hold it from a reader's job,
/// whatever their priorities). Every job that holds the budget is running,
/// so a waiting worker always sees the budget come back.
public final class DecodeBudget: @unchecked Sendable {
    // Safe to share: every field but `start` is touched only with `condition` locked.
    /// The process's budget, which every thumbnailer uses unless given its own
    /// (tests). 128 MiB by default: a 24-megapixel progressive JPEG (72 MB of
    /// coefficients) beside a few small decodes; `warmfeed serve --decode-mb` sets it.
    public static let shared = DecodeBudget(bytes: defaultBytes)
    /// The process's budget unless set: 128 MiB.
    public static let defaultBytes = 128 << 20

    private let condition = NSCondition()
    private var machine: DecodeAdmission
    private var nextTicket: UInt64 = 1
    /// Tickets let in, or refused (the budget was lowered under them), not yet seen by their waiter.
    private var answered: [UInt64: Bool] = [:]
    private var timedOut = 0
    private let start = ContinuousClock.now

    /// A budget of `bytes`; a job waiting `patience` seconds holds the line (see ``DecodeAdmission``).
    public init(bytes: Int, patience: Double = 1) {
        machine = DecodeAdmission(budget: bytes, patience: patience)
    }

    /// Sets the budget (the operator's `--decode-mb`). Waiting jobs over the
    /// new budget are refused; jobs decoding are left to end.
    public func setBytes(_ bytes: Int) {
        condition.withLock {
            let change = machine.setBudget(bytes, now: seconds())
            for ticket in change.admitted { answered[ticket] = true }
            for ticket in change.refused { answered[ticket] = false }
            condition.broadcast()
        }
    }

    /// What the budget holds now and did since the start.
    public var stats: DecodeStats {
        condition.withLock {
            DecodeStats(
                budgetBytes: machine.budget, inUseBytes: machine.inUse, peakBytes: machine.peak, decoding: machine.running,
                waiting: machine.waiting, longestWaitSeconds: machine.longestWait(now: seconds()), admitted: machine.admitted,
                waited: machine.admittedAfterWaiting, refused: machine.refused, timedOut: timedOut)
        }
    }

    /// Whether `cost` bytes could ever fit; a job that cannot is counted as refused.
    func couldFit(_ cost: Int) -> Bool {
        condition.withLock { machine.couldFit(cost) }
    }

    /// Waits, on the calling thread (a worker's), until `cost` bytes fit:
    /// true, and the caller must call ``leave(cost:)`` when its work ends;
    /// false when they never can (the budget was lowered under them).
    func enter(cost: Int, priority: UInt8) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let ticket = nextTicket
        nextTicket += 1
        switch machine.enter(ticket, cost: cost, priority: priority, now: seconds()) {
        case .admitted: return true
        case .refused: return false
        case .waiting:
            while true {
                if let answer = answered.removeValue(forKey: ticket) { return answer }
                condition.wait()
            }
        }
    }

    /// An admitted job of `cost` bytes ended: the jobs that fit now go in.
    func leave(cost: Int) {
        condition.withLock {
            let admitted = machine.leave(cost: cost, now: seconds())
            guard !admitted.isEmpty else { return }
            for ticket in admitted { answered[ticket] = true }
            condition.broadcast()
        }
    }

    /// Counts a job that libvips stopped at its deadline.
    func countTimedOut() {
        condition.withLock { timedOut += 1 }
    }

    private func seconds() -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}

/// The decode budget's numbers, for the admin view and `/metrics`.
public struct DecodeStats: Sendable, Equatable {
    /// The most bytes decodes may hold at once (estimated from their headers).
    public var budgetBytes: Int
    /// The bytes the decodes running now hold, and the most ever held at once.
    public var inUseBytes: Int
    public var peakBytes: Int
    /// Jobs decoding now, and waiting (on a worker) for memory now.
    public var decoding: Int
    public var waiting: Int
    /// How long the job waiting longest has waited, nil when none waits.
    public var longestWaitSeconds: Double?
    /// Jobs let in since the start, and of those how many had to wait.
    public var admitted: Int
    public var waited: Int
    /// Jobs refused since the start: their estimate was over the whole budget.
    public var refused: Int
    /// Jobs libvips stopped since the start: past their deadline (``ThumbnailLimits/maxWorkTime``).
    public var timedOut: Int
}
