import Foundation
import Synchronization

/// The memory libvips may hold for decoding, shared by all the process's
/// libvips work: every ``Thumbnailer`` (the server's, the demo origin's
/// painter) asks it before a job goes to a worker, with the job's estimate
/// (``DecodeCost``), and waits until the estimate fits. What can never fit is
/// refused. The decisions are ``DecodeAdmission``'s, under this one lock;
/// callers wait on continuations, resumed after the lock is let go.
public final class DecodeBudget: Sendable {
    /// The process's budget, which every thumbnailer uses unless given its own
    /// (tests). 128 MiB by default: a 24-megapixel progressive JPEG (72 MB of
    /// coefficients) beside a few small decodes; `warmfeed serve --decode-mb` sets it.
    public static let shared = DecodeBudget(bytes: 128 << 20)

    /// What a job's request came to.
    enum Admission: Equatable {
        case admitted
        /// Over the whole budget.
        case refused
        /// The caller was cancelled while it waited.
        case cancelled
    }

    private struct State {
        var machine: DecodeAdmission
        var waiting: [UInt64: CheckedContinuation<Admission, Never>] = [:]
        /// Tickets handed out whose job has not entered the machine yet, and
        /// of those the ones cancelled or raised before it did.
        var reserved: Set<UInt64> = []
        var cancelledEarly: Set<UInt64> = []
        var raisedEarly: [UInt64: UInt8] = [:]
        var nextTicket: UInt64 = 1
        var timedOut = 0
    }

    private let state: Mutex<State>
    private let start = ContinuousClock.now

    /// A budget of `bytes`; a job waiting `patience` seconds holds the line (see ``DecodeAdmission``).
    public init(bytes: Int, patience: Double = 1) {
        state = Mutex(State(machine: DecodeAdmission(budget: bytes, patience: patience)))
    }

    /// Sets the budget (the operator's `--decode-mb`). Waiting jobs over the
    /// new budget are refused; jobs decoding are left to end.
    public func setBytes(_ bytes: Int) {
        let now = seconds()
        let (admitted, refused) = state.withLock { state in
            let change = state.machine.setBudget(bytes, now: now)
            return (take(change.admitted, from: &state), take(change.refused, from: &state))
        }
        for continuation in admitted { continuation.resume(returning: .admitted) }
        for continuation in refused { continuation.resume(returning: .refused) }
    }

    /// What the budget holds now and did since the start.
    public var stats: DecodeStats {
        let now = seconds()
        return state.withLock { state in
            let machine = state.machine
            return DecodeStats(
                budgetBytes: machine.budget, inUseBytes: machine.inUse, peakBytes: machine.peak, decoding: machine.running,
                waiting: machine.waiting, longestWaitSeconds: machine.longestWait(now: now), admitted: machine.admitted,
                waited: machine.admittedAfterWaiting, refused: machine.refused, timedOut: state.timedOut)
        }
    }

    /// Waits until `cost` bytes fit, then answers `.admitted` (the caller
    /// must call ``leave(cost:)`` when its work ends), or `.refused` at once
    /// when they never can, or `.cancelled` when the calling task is
    /// cancelled while it waits. A waiter whose task's priority is raised
    /// moves up the line.
    func admit(cost: Int) async -> Admission {
        let ticket = state.withLock { state in
            defer { state.nextTicket += 1 }
            state.reserved.insert(state.nextTicket)
            return state.nextTicket
        }
        let priority = Task.currentPriority.rawValue
        return await withTaskCancellationHandler {
            await withTaskPriorityEscalationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Admission, Never>) in
                    let now = seconds()
                    let answer: Admission? = state.withLock { state in
                        state.reserved.remove(ticket)
                        if state.cancelledEarly.remove(ticket) != nil { return .cancelled }
                        let raised = max(priority, state.raisedEarly.removeValue(forKey: ticket) ?? 0)
                        switch state.machine.enter(ticket, cost: cost, priority: raised, now: now) {
                        case .admitted: return .admitted
                        case .refused: return .refused
                        case .waiting:
                            state.waiting[ticket] = continuation
                            return nil
                        }
                    }
                    if let answer { continuation.resume(returning: answer) }
                }
            } onPriorityEscalated: { _, raised in
                let now = seconds()
                let admitted = state.withLock { state in
                    guard state.waiting[ticket] != nil else {
                        if state.reserved.contains(ticket) {
                            state.raisedEarly[ticket] = max(raised.rawValue, state.raisedEarly[ticket] ?? 0)
                        }
                        return [CheckedContinuation<Admission, Never>]()
                    }
                    return take(state.machine.raise(ticket, to: raised.rawValue, now: now), from: &state)
                }
                for continuation in admitted { continuation.resume(returning: .admitted) }
            }
        } onCancel: {
            let now = seconds()
            let (cancelled, admitted) = state.withLock { state in
                guard let continuation = state.waiting.removeValue(forKey: ticket) else {
                    // Not entered yet: its entry answers `.cancelled`. (Admitted already: it runs.)
                    if state.reserved.contains(ticket) { state.cancelledEarly.insert(ticket) }
                    return (CheckedContinuation<Admission, Never>?.none, [CheckedContinuation<Admission, Never>]())
                }
                let removed = state.machine.cancel(ticket, now: now)
                return (continuation, take(removed.admitted, from: &state))
            }
            cancelled?.resume(returning: .cancelled)
            for continuation in admitted { continuation.resume(returning: .admitted) }
        }
    }

    /// An admitted job of `cost` bytes ended: the jobs that fit now go in.
    func leave(cost: Int) {
        let now = seconds()
        let admitted = state.withLock { state in take(state.machine.leave(cost: cost, now: now), from: &state) }
        for continuation in admitted { continuation.resume(returning: .admitted) }
    }

    /// Counts a job that libvips stopped at its deadline.
    func countTimedOut() {
        state.withLock { $0.timedOut += 1 }
    }

    private func take(_ tickets: [UInt64], from state: inout State) -> [CheckedContinuation<Admission, Never>] {
        tickets.compactMap { state.waiting.removeValue(forKey: $0) }
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
    /// Jobs decoding now, and waiting for memory now.
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
