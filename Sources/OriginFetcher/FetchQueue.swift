/// The bookkeeping of fetches between the callers of `fetch` and the transfer
/// thread: which fetches wait to be started, which run in libcurl, which were
/// cancelled, and the counters.
///
/// A pure value with no I/O and no threads, so that every race between a
/// caller, its cancellation and the transfer thread can be played out in a unit
/// test. The fetcher keeps it in a `Mutex`; each mutating call returns what the
/// caller must do once the lock is released (resume a continuation, wake the
/// thread). `Work` is what a fetch hands over (its URL, limits and continuation).
struct FetchQueue<Work> {
    /// Identifies one fetch from submission to end.
    typealias ID = UInt64

    /// What `submit` asks of its caller.
    enum SubmitAction {
        /// The work is queued: wake the transfer thread so it starts it.
        case wakeLoop
        /// The work was refused (the fetch was cancelled before it was submitted,
        /// or the fetcher is shut down): end it with `cancelled` now.
        case refuse(Work)
    }

    /// What `cancel` asks of its caller.
    enum CancelAction {
        /// Nothing to do now.
        case none
        /// The transfer runs in libcurl: wake the transfer thread, which removes
        /// it and ends the fetch.
        case wakeLoop
        /// The work never reached libcurl and is dropped: end it with `cancelled` now.
        case resume(Work)
    }

    /// How a started transfer ended, for the counters.
    enum Outcome {
        case finished, failed, cancelled
    }

    /// What the transfer thread takes on each turn of its loop.
    struct Inbox {
        /// Fetches to start, in the order they were submitted.
        var start: [(id: ID, work: Work)] = []
        /// Running fetches to remove and end with `cancelled`.
        var cancel: [ID] = []
        /// Whether to end every running transfer and stop.
        var shutDown = false
    }

    /// Whether `shutDown` was called; no work is accepted after it.
    private(set) var isShutDown = false
    /// The counters, kept in step with every change below.
    private(set) var stats = FetcherStats()

    private var nextID: ID = 1
    private var waiting: [(id: ID, work: Work)] = []
    private var running: Set<ID> = []
    private var cancelRequests: [ID] = []
    /// Fetches cancelled before `submit` (a task already cancelled when it
    /// called `fetch`), and cancellations that came after the fetch ended but
    /// before its cancellation handler was taken down; `forget` drops them.
    private var cancelledEarly: Set<ID> = []

    init() {}

    /// A new identifier, to be taken before the cancellation handler is installed.
    mutating func makeID() -> ID {
        defer { nextID += 1 }
        return nextID
    }

    /// Hands a fetch over to the transfer thread.
    mutating func submit(_ id: ID, _ work: Work) -> SubmitAction {
        if isShutDown || cancelledEarly.remove(id) != nil {
            stats.cancelled += 1
            return .refuse(work)
        }
        waiting.append((id, work))
        stats.inFlight += 1
        return .wakeLoop
    }

    /// The fetch's task was cancelled.
    mutating func cancel(_ id: ID) -> CancelAction {
        if let index = waiting.firstIndex(where: { $0.id == id }) {
            let work = waiting.remove(at: index).work
            stats.inFlight -= 1
            stats.cancelled += 1
            return .resume(work)
        }
        if running.contains(id) {
            if !cancelRequests.contains(id) { cancelRequests.append(id) }
            return .wakeLoop
        }
        cancelledEarly.insert(id)
        return .none
    }

    /// The fetch has returned: its cancellation handler can no longer run, so
    /// an early cancellation kept for it is dropped.
    mutating func forget(_ id: ID) {
        cancelledEarly.remove(id)
    }

    /// A fetch refused before it was submitted (a bad URL or scheme).
    mutating func countRefused() {
        stats.failed += 1
    }

    /// What the transfer thread must do now; the fetches it starts count as running.
    mutating func takeInbox() -> Inbox {
        var inbox = Inbox(start: waiting, cancel: cancelRequests, shutDown: isShutDown)
        for entry in waiting { running.insert(entry.id) }
        stats.started += waiting.count
        waiting.removeAll()
        cancelRequests.removeAll()
        // A cancellation may name a fetch that ended since it was asked for.
        inbox.cancel.removeAll { !running.contains($0) }
        return inbox
    }

    /// A running fetch ended; `false` when it was not running (ended twice).
    @discardableResult
    mutating func ended(_ id: ID, _ outcome: Outcome) -> Bool {
        guard running.remove(id) != nil else { return false }
        stats.inFlight -= 1
        switch outcome {
        case .finished: stats.finished += 1
        case .failed: stats.failed += 1
        case .cancelled: stats.cancelled += 1
        }
        return true
    }

    /// Stops accepting work; answers the fetches that never reached libcurl,
    /// which the caller ends with `cancelled`. The running ones are left to the
    /// transfer thread. Calling it again does nothing.
    mutating func shutDown() -> [Work] {
        isShutDown = true
        let dropped = waiting.map(\.work)
        stats.inFlight -= dropped.count
        stats.cancelled += dropped.count
        waiting.removeAll()
        return dropped
    }

    /// How many fetches are known in each state, for tests.
    var counts: (waiting: Int, running: Int, cancelRequests: Int, cancelledEarly: Int) {
        (waiting.count, running.count, cancelRequests.count, cancelledEarly.count)
    }
}
