/// The bookkeeping of fetches between the callers of `fetch` and the transfer
/// thread: which fetches wait to be started, which run in libcurl, which were
/// cancelled, and the counters.
///
/// Fetches wait here, not in libcurl: each host gets at most `maxPerHost`
/// transfers in libcurl at once, and all hosts together `maxTotal`, so a
/// transfer handed over finds a connection and its timeout counts time on the
/// wire only. libcurl is given no caps of its own: its queue of transfers
/// waiting for a connection (7.88's PENDING state) is woken only when another
/// transfer ends, and under load a transfer was seen to sit there, with no
/// connection made, for its whole timeout while nothing else ran. Waiting
/// has its own bound (`maxWait`): a fetch that never got a connection in that
/// time ends as `busy`, which is not the origin's failure. Urgent fetches (a reader waits)
/// start before the others of their host.
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
        /// Failed because the fetch's limits refused where it led (counted as failed too).
        case refused
    }

    /// What the transfer thread takes on each turn of its loop.
    struct Inbox {
        /// Fetches to start: urgent first, then in the order they were submitted.
        var start: [(id: ID, work: Work)] = []
        /// Running fetches to remove and end with `cancelled`.
        var cancel: [ID] = []
        /// Fetches that waited longer than `maxWait` for a connection: end them with `busy`.
        var expired: [Work] = []
        /// Whether to end every running transfer and stop.
        var shutDown = false
    }

    private struct Waiting {
        var id: ID
        var work: Work
        var since: ContinuousClock.Instant
    }

    /// One host's fetches: waiting (urgent first) and how many run.
    private struct Host {
        var urgent: [Waiting] = []
        var later: [Waiting] = []
        var running = 0

        var isIdle: Bool { urgent.isEmpty && later.isEmpty && running == 0 }
    }

    /// The most transfers in libcurl at once for one host.
    let maxPerHost: Int
    /// The most transfers in libcurl at once in all.
    let maxTotal: Int
    /// The longest a fetch waits for a connection before it ends as `busy`.
    let maxWait: Duration

    /// Whether `shutDown` was called; no work is accepted after it.
    private(set) var isShutDown = false
    /// The counters, kept in step with every change below.
    private(set) var stats = FetcherStats()

    private var nextID: ID = 1
    private var hosts: [String: Host] = [:]
    /// The host of every fetch waiting or running.
    private var hostOf: [ID: String] = [:]
    private var waitingCount = 0
    private var running: Set<ID> = []
    private var cancelRequests: [ID] = []
    /// Fetches cancelled before `submit` (a task already cancelled when it
    /// called `fetch`), and cancellations that came after the fetch ended but
    /// before its cancellation handler was taken down; `forget` drops them.
    private var cancelledEarly: Set<ID> = []

    /// A queue letting `maxPerHost` transfers run at once per host and
    /// `maxTotal` in all, and fetches wait `maxWait` at most.
    init(maxPerHost: Int = 8, maxTotal: Int = 64, maxWait: Duration = .seconds(30)) {
        self.maxPerHost = max(1, maxPerHost)
        self.maxTotal = max(1, maxTotal)
        self.maxWait = maxWait
    }

    /// A new identifier, to be taken before the cancellation handler is installed.
    mutating func makeID() -> ID {
        defer { nextID += 1 }
        return nextID
    }

    /// Hands a fetch to `host` over to the transfer thread; an `urgent` one
    /// starts before the host's others. `now` starts its wait.
    mutating func submit(_ id: ID, _ work: Work, host: String = "", urgent: Bool = true, now: ContinuousClock.Instant = .now) -> SubmitAction {
        if isShutDown || cancelledEarly.remove(id) != nil {
            stats.cancelled += 1
            return .refuse(work)
        }
        let waiting = Waiting(id: id, work: work, since: now)
        if urgent { hosts[host, default: Host()].urgent.append(waiting) } else { hosts[host, default: Host()].later.append(waiting) }
        hostOf[id] = host
        waitingCount += 1
        stats.inFlight += 1
        return .wakeLoop
    }

    /// The fetch's task was cancelled.
    mutating func cancel(_ id: ID) -> CancelAction {
        if let host = hostOf[id], !running.contains(id), let waiting = removeWaiting(id, of: host) {
            stats.inFlight -= 1
            stats.cancelled += 1
            return .resume(waiting.work)
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
    /// A fetch was tried again on a new connection (see `Transfer.mayRetryOnFreshConnection`).
    mutating func countRetry() {
        stats.retriedOnNewConnection += 1
    }

    mutating func countRefused() {
        stats.failed += 1
    }

    /// What the transfer thread must do now at `now`: the fetches that may
    /// start (each host up to `maxPerHost` running, all up to `maxTotal`; they
    /// count as running from here), the cancellations, and the fetches that
    /// waited too long.
    mutating func takeInbox(now: ContinuousClock.Instant = .now) -> Inbox {
        var inbox = Inbox(cancel: cancelRequests, shutDown: isShutDown)
        cancelRequests.removeAll()
        // A cancellation may name a fetch that ended since it was asked for.
        inbox.cancel.removeAll { !running.contains($0) }
        guard waitingCount > 0 else { return inbox }
        // One start per host per round, so that under the total cap no host
        // takes every free connection while another's fetches wait.
        var open = Array(hosts.keys)
        while running.count < maxTotal, !open.isEmpty {
            open.removeAll { name in
                guard running.count < maxTotal, let next = startNext(of: name) else { return true }
                inbox.start.append(next)
                return false
            }
        }
        for name in Array(hosts.keys) {
            var host = hosts[name]!
            for queue in [\Host.urgent, \Host.later] {
                while let oldest = host[keyPath: queue].first, now - oldest.since > maxWait {
                    host[keyPath: queue].removeFirst()
                    waitingCount -= 1
                    hostOf[oldest.id] = nil
                    stats.inFlight -= 1
                    stats.busy += 1
                    inbox.expired.append(oldest.work)
                }
            }
            hosts[name] = host.isIdle ? nil : host
        }
        stats.started += inbox.start.count
        return inbox
    }

    /// Whether some fetch waits for a connection now free (the loop should not sleep).
    var canStartMore: Bool {
        waitingCount > 0 && running.count < maxTotal
            && hosts.values.contains { $0.running < maxPerHost && !($0.urgent.isEmpty && $0.later.isEmpty) }
    }

    /// Takes the host's next waiting fetch (urgent first) as running, when the
    /// host has a connection to spare.
    private mutating func startNext(of name: String) -> (id: ID, work: Work)? {
        guard var host = hosts[name], host.running < maxPerHost,
            let next = host.urgent.isEmpty ? host.later.first : host.urgent.first
        else { return nil }
        if host.urgent.isEmpty { host.later.removeFirst() } else { host.urgent.removeFirst() }
        host.running += 1
        hosts[name] = host
        waitingCount -= 1
        running.insert(next.id)
        return (next.id, next.work)
    }

    /// A running fetch ended; `false` when it was not running (ended twice).
    @discardableResult
    mutating func ended(_ id: ID, _ outcome: Outcome) -> Bool {
        guard running.remove(id) != nil else { return false }
        if let name = hostOf.removeValue(forKey: id), var host = hosts[name] {
            host.running -= 1
            hosts[name] = host.isIdle ? nil : host
        }
        stats.inFlight -= 1
        switch outcome {
        case .finished: stats.finished += 1
        case .failed: stats.failed += 1
        case .cancelled: stats.cancelled += 1
        case .refused:
            stats.failed += 1
            stats.refused += 1
        }
        return true
    }

    /// Stops accepting work; answers the fetches that never reached libcurl,
    /// which the caller ends with `cancelled`. The running ones are left to the
    /// transfer thread. Calling it again does nothing.
    mutating func shutDown() -> [Work] {
        isShutDown = true
        var dropped: [Work] = []
        for (name, host) in hosts {
            for waiting in host.urgent + host.later {
                dropped.append(waiting.work)
                hostOf[waiting.id] = nil
            }
            hosts[name] = host.running == 0 ? nil : Host(running: host.running)
        }
        waitingCount = 0
        stats.inFlight -= dropped.count
        stats.cancelled += dropped.count
        return dropped
    }

    /// How many fetches are known in each state, for tests.
    var counts: (waiting: Int, running: Int, cancelRequests: Int, cancelledEarly: Int) {
        (waitingCount, running.count, cancelRequests.count, cancelledEarly.count)
    }

    /// Moves the waiting fetches whose work `matches` ahead of their host's
    /// other non-urgent ones, after its urgent ones (someone waits on them now);
    /// returns how many moved. Fetches already running are not touched.
    mutating func promote(where matches: (Work) -> Bool) -> Int {
        var moved = 0
        for name in Array(hosts.keys) {
            var host = hosts[name]!
            let (promoted, rest) = (host.later.filter { matches($0.work) }, host.later.filter { !matches($0.work) })
            guard !promoted.isEmpty else { continue }
            host.urgent += promoted
            host.later = rest
            hosts[name] = host
            moved += promoted.count
        }
        return moved
    }

    private mutating func removeWaiting(_ id: ID, of name: String) -> Waiting? {
        guard var host = hosts[name] else { return nil }
        var found: Waiting?
        if let index = host.urgent.firstIndex(where: { $0.id == id }) {
            found = host.urgent.remove(at: index)
        } else if let index = host.later.firstIndex(where: { $0.id == id }) {
            found = host.later.remove(at: index)
        }
        guard let found else { return nil }
        waitingCount -= 1
        hostOf[id] = nil
        hosts[name] = host.isIdle ? nil : host
        return found
    }
}
