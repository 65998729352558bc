/// The decode budget's bookkeeping, with no threads, no locks and no clock:
/// which jobs decode now, which wait for memory and in what order, and which
/// are refused because they can never fit. `now` (seconds, any origin) is
/// passed in by the caller.
///
/// A job enters with its estimated cost (``DecodeCost``) and its priority.
/// It decodes at once when its cost fits beside what the jobs decoding hold;
/// otherwise it waits. Waiting jobs are looked at highest priority first,
/// oldest first within a priority, and each one that fits goes in: a small
/// job may pass a large one that does not fit yet, so one large picture
/// does not hold up the feed's small ones. But a job that has waited
/// `patience` seconds holds the line: nothing behind it goes in before it,
/// so the jobs decoding finish, and it gets its room (no job waits for ever
/// behind a stream of small ones). A job whose cost is over the whole budget
/// is refused when it enters, and so are those waiting when the budget is
/// lowered under their cost.
struct DecodeAdmission {
    /// What happened to a job that entered.
    enum Entry: Equatable {
        /// It may decode now; ``leave(cost:now:)`` when it ends.
        case admitted
        /// It waits; a later call's answer admits it.
        case waiting
        /// It costs more than the whole budget: it can never decode.
        case refused
    }

    /// What a change let through: jobs that may decode now, and waiting jobs refused.
    struct Change: Equatable {
        var admitted: [UInt64] = []
        var refused: [UInt64] = []
    }

    private struct Waiter {
        let ticket: UInt64
        let cost: Int
        var priority: UInt8
        let since: Double
    }

    /// The most bytes the jobs decoding may hold together.
    private(set) var budget: Int
    /// How long a waiting job lets others pass it, in seconds.
    let patience: Double
    /// The bytes the jobs decoding now hold (their estimates).
    private(set) var inUse = 0
    /// The most bytes ever held at once.
    private(set) var peak = 0
    /// Jobs decoding now.
    private(set) var running = 0
    /// Jobs let in since the start, and of those how many had waited.
    private(set) var admitted = 0
    private(set) var admittedAfterWaiting = 0
    /// Jobs refused since the start: over the whole budget.
    private(set) var refused = 0
    /// Waiting jobs, in the order they are looked at.
    private var waiters: [Waiter] = []

    init(budget: Int, patience: Double = 1) {
        self.budget = max(0, budget)
        self.patience = patience
    }

    /// Jobs waiting for memory now.
    var waiting: Int { waiters.count }

    /// How long the job waiting longest has waited, nil when none waits.
    func longestWait(now: Double) -> Double? {
        waiters.map(\.since).min().map { max(0, now - $0) }
    }

    /// Whether a job of `cost` bytes could ever decode: a job over the whole
    /// budget is refused (and counted) before it takes a worker.
    mutating func couldFit(_ cost: Int) -> Bool {
        guard max(0, cost) > budget else { return true }
        refused += 1
        return false
    }

    /// A job of `cost` bytes asks to decode, under `ticket` (unique while it lives).
    mutating func enter(_ ticket: UInt64, cost: Int, priority: UInt8, now: Double) -> Entry {
        let cost = max(0, cost)
        guard cost <= budget else {
            refused += 1
            return .refused
        }
        let waiter = Waiter(ticket: ticket, cost: cost, priority: priority, since: now)
        let index = waiters.firstIndex { $0.priority < priority } ?? waiters.endIndex
        waiters.insert(waiter, at: index)
        return admitWaiting(now: now, entering: ticket).admitted.contains(ticket) ? .admitted : .waiting
    }

    /// A job that was admitted with `cost` ended: answers the waiting jobs that go in now.
    mutating func leave(cost: Int, now: Double) -> [UInt64] {
        precondition(running > 0, "leave without an admission")
        running -= 1
        inUse -= max(0, cost)
        return admitWaiting(now: now).admitted
    }

    /// Sets the budget: waiting jobs over the new one are refused, and those
    /// that fit now go in. Jobs decoding are left to end.
    mutating func setBudget(_ bytes: Int, now: Double) -> Change {
        budget = max(0, bytes)
        var change = Change()
        waiters.removeAll { waiter in
            guard waiter.cost > budget else { return false }
            change.refused.append(waiter.ticket)
            return true
        }
        refused += change.refused.count
        change.admitted = admitWaiting(now: now).admitted
        return change
    }

    /// Lets in, in order, each waiting job that fits, until one that does
    /// not fit has waited out its patience.
    private mutating func admitWaiting(now: Double, entering: UInt64? = nil) -> Change {
        var change = Change()
        var index = 0
        while index < waiters.count {
            let waiter = waiters[index]
            if inUse + waiter.cost <= budget {
                waiters.remove(at: index)
                inUse += waiter.cost
                peak = max(peak, inUse)
                running += 1
                admitted += 1
                if waiter.ticket != entering { admittedAfterWaiting += 1 }
                change.admitted.append(waiter.ticket)
                continue
            }
            if now - waiter.since >= patience { break }
            index += 1
        }
        return change
    }
}
