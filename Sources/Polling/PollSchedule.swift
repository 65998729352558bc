import DequeModule
import HeapModule

/// When each of many resources is polled: each on its own schedule (its
/// interval, lengthened by its hints, backed off while it fails), no host
/// asked more than `perHost` at once nor before its `Retry-After`, no more than
/// `inAll` fetches at once, and slow fetches moved aside so that they never
/// hold the fast lane.
///
/// A pure value with no clock, no I/O and no threads, in the shape of
/// `OriginFetcher`'s `FetchQueue`: the driver keeps it under one lock, passes
/// the wall-clock time in, and carries out the returned `PollAction`s after
/// releasing the lock. Every call (`adopt`, `tick`, `finished`) returns the
/// fetches that may start now and at most one `.wake(at:)`, which replaces the
/// driver's previous one.
///
/// Cheap with thousands of resources: each host keeps its waiting resources
/// in a heap, and a second heap holds one entry per host that may start one
/// (keyed by its earliest resource, or its hold's end). A host at its limit
/// has no entry there, and a held host's entry waits for the hold's end, so
/// a blocked host's resources are never looked at until it can start one.
public struct PollSchedule: Sendable {
    /// The rules the schedule follows.
    public let rules: PollRules

    /// One resource: its host, persisted state, where its polls fall and
    /// whether a fetch of it runs.
    struct Resource {
        var host: String
        /// Kept with `nextPollAt` always set: the poll's due time.
        var state: PollState
        /// The grid point its next interval counts from: the due time of its
        /// last regular poll, not when that poll ended (no drift).
        var slot: Int64
        /// Its entry in its host's queue (0 while a fetch runs).
        var ticket: UInt64
        var fetching: Bool

        var due: Int64 { state.nextPollAt ?? .min }
    }

    /// A resource waiting in its host's queue, earliest first, ties by id.
    struct Queued: Comparable {
        var at: Int64
        var id: Int64
        var ticket: UInt64
        static func < (a: Queued, b: Queued) -> Bool { (a.at, a.id) < (b.at, b.id) }
    }

    /// A host that may start its earliest resource at `at` (its due time, or
    /// the end of the host's hold).
    struct Ready: Comparable {
        var at: Int64
        var id: Int64
        var host: String
        var stamp: UInt64
        static func < (a: Ready, b: Ready) -> Bool { (a.at, a.id) < (b.at, b.id) }
    }

    /// One host's waiting resources, fetches in flight, hold and strikes.
    struct Host {
        var queue = Heap<Queued>()
        /// Entries in `queue` whose resource left it (dropped or moved).
        var stale = 0
        var members = 0
        var fetching = 0
        /// Fetches answered whose outcome is not in yet (`answered`): they
        /// hold no slot, but their outcome is still the host's to record.
        var answering = 0
        var heldUntil: Int64 = .min
        /// `429`/`503`s in a row without an answer in between: each doubles
        /// the hold of one that said no `Retry-After`.
        var strikes = 0
        /// The key of its one current entry in `ready`, and that entry's stamp.
        var enlisted: (at: Int64, id: Int64)?
        var stamp: UInt64 = 0
    }

    /// A fetch in flight: the host it counts against (the resource may have
    /// moved since), when it started and in which lane.
    struct Flight {
        var host: String
        var startedAt: Int64
        var slow = false
        var number: UInt64
        /// Whether the answer is in (`answered`): its slots are free again.
        var answered = false
    }

    var resources: [Int64: Resource] = [:]
    var hosts: [String: Host] = [:]
    var ready = Heap<Ready>()
    /// Includes fetches of resources dropped while in flight: their hosts
    /// still answer them.
    var flights: [Int64: Flight] = [:]
    /// Fast-lane fetches in the order they started, for moving to the slow
    /// lane; entries of fetches ended or moved are skipped when met.
    var fastLane = Deque<(id: Int64, number: UInt64)>()
    var fastCount = 0
    var slowCount = 0
    /// Tickets, stamps and flight numbers: each one used once.
    var counter: UInt64 = 0

    /// An empty schedule following `rules`.
    public init(rules: PollRules) {
        self.rules = rules
    }

    /// Takes `list` as the whole current list of resources. New ids are added,
    /// due when their state says (at once if never scheduled); ids no longer
    /// listed are dropped (a fetch of one still in flight keeps its host's slot
    /// until it ends, and its outcome is ignored); kept ids keep their schedule
    /// and only follow a change of host. Returns what a `tick` would.
    public mutating func adopt(_ list: [PollResource], now: Int64) -> [PollAction] {
        var listed = Set<Int64>(minimumCapacity: list.count)
        for resource in list {
            // An id listed twice: the first entry counts.
            guard listed.insert(resource.id).inserted else { continue }
            if let kept = resources[resource.id] {
                if kept.host != resource.host { move(resource.id, to: resource.host) }
            } else {
                add(resource, now: now)
            }
        }
        if listed.count < resources.count {
            for id in resources.keys.filter({ !listed.contains($0) }) { drop(id) }
        }
        for name in Array(hosts.keys) { tidy(name, now: now) }
        return tick(now: now)
    }

    /// Starts the resources due by `now`, earliest first (ties by id), while
    /// their hosts' limits and holds and `inAll` allow; then asks to be woken
    /// when the next one could start.
    public mutating func tick(now: Int64) -> [PollAction] {
        var actions: [PollAction] = []
        moveSlowFetches(now: now)
        var blockedByAll = false
        while let top = ready.min {
            guard hosts[top.host]?.stamp == top.stamp else {
                ready.removeMin()
                continue
            }
            guard top.at <= now else { break }
            guard fastCount < rules.inAll else {
                blockedByAll = true
                break
            }
            ready.removeMin()
            hosts[top.host]!.enlisted = nil
            start(top.id, on: top.host, now: now)
            actions.append(.fetch(top.id))
            enlist(top.host)
        }
        if ready.count > 2 * hosts.count + 64 { rebuildReady() }
        if blockedByAll {
            // Only an end, or a fetch growing slow enough to leave the fast lane, frees a start.
            if slowCount < rules.slowLane, let oldest = oldestFastFetch() { actions.append(.wake(at: oldest + rules.slowAfter)) }
        } else if let next = ready.min {
            actions.append(.wake(at: next.at))
        }
        return actions
    }

    /// The fetch of `id` ended with `outcome` at `now`: frees its slot,
    /// schedules the resource's next poll (jittered with `random` when it
    /// failed) and returns what a `tick` would. An id with no fetch in flight
    /// is ignored; so is the outcome of a resource dropped since it started.
    public mutating func finished(_ id: Int64, _ outcome: PollOutcome, now: Int64, random: inout some RandomNumberGenerator) -> [PollAction] {
        guard let flight = flights.removeValue(forKey: id) else { return tick(now: now) }
        if flight.answered {
            hosts[flight.host]!.answering -= 1
        } else {
            free(flight)
        }
        if resources[id] != nil {
            record(outcome, of: id, answeredBy: flight.host, now: now, random: &random)
            resources[id]!.fetching = false
            queue(id)
        }
        enlist(flight.host)
        tidy(flight.host, now: now)
        return tick(now: now)
    }

    /// The answer to the fetch of `id` is in, its outcome not yet (its items
    /// are being written): its slots, on its host and in all, go to others
    /// now; the resource stays out of the queue until `finished`. Returns
    /// what a `tick` would.
    public mutating func answered(_ id: Int64, now: Int64) -> [PollAction] {
        guard let flight = flights[id], !flight.answered else { return tick(now: now) }
        flights[id]!.answered = true
        free(flight)
        hosts[flight.host]!.answering += 1
        enlist(flight.host)
        return tick(now: now)
    }

    private mutating func free(_ flight: Flight) {
        if flight.slow { slowCount -= 1 } else { fastCount -= 1 }
        hosts[flight.host]!.fetching -= 1
    }

    /// The resource's state, to persist (after each `finished`) and show.
    public func state(of id: Int64) -> PollState? {
        resources[id]?.state
    }

    // MARK: - The bookkeeping

    private mutating func add(_ resource: PollResource, now: Int64) {
        var state = resource.state
        let slot: Int64
        if let next = state.nextPollAt {
            let due = min(next, now + longestWait)
            state.nextPollAt = due
            slot = due
        } else {
            // Polled at once; its later polls fall on its own grid, spread by its id's hash so
            // that many resources added together do not all come due together again.
            state.nextPollAt = now
            slot = firstSlot(of: resource.id, now: now)
        }
        resources[resource.id] = Resource(host: resource.host, state: state, slot: slot, ticket: 0, fetching: flights[resource.id] != nil)
        hosts[resource.host, default: Host()].members += 1
        if let until = state.hostHeldUntil, until > now {
            hold(resource.host, until: min(until, now + rules.retryAfterMax))
        }
        if flights[resource.id] == nil { queue(resource.id) }
    }

    private mutating func drop(_ id: Int64) {
        guard let resource = resources.removeValue(forKey: id) else { return }
        hosts[resource.host]!.members -= 1
        if !resource.fetching { hosts[resource.host]!.stale += 1 }
        enlist(resource.host)
    }

    private mutating func move(_ id: Int64, to host: String) {
        let old = resources[id]!
        hosts[old.host]!.members -= 1
        hosts[host, default: Host()].members += 1
        resources[id]!.host = host
        if !old.fetching {
            hosts[old.host]!.stale += 1
            enlist(old.host)
            queue(id)
        }
    }

    /// Puts a resource with no fetch in flight in its host's queue, at its due time.
    mutating func queue(_ id: Int64) {
        counter += 1
        resources[id]!.ticket = counter
        let resource = resources[id]!
        hosts[resource.host]!.queue.insert(Queued(at: resource.due, id: id, ticket: counter))
        enlist(resource.host)
    }

    /// Holds `name` until `until` (a later hold wins).
    mutating func hold(_ name: String, until: Int64) {
        let current = hosts[name, default: Host()].heldUntil
        hosts[name]!.heldUntil = max(current, until)
        enlist(name)
    }

    /// Gives the host's entry in `ready` the key its state calls for now: its
    /// earliest current resource, not before its hold ends; none while it is at `perHost`.
    mutating func enlist(_ name: String) {
        guard hosts[name] != nil else { return }
        while let head = hosts[name]!.queue.min, !isCurrent(head) {
            hosts[name]!.queue.removeMin()
            hosts[name]!.stale -= 1
        }
        let host = hosts[name]!
        let key = host.fetching < rules.perHost ? host.queue.min.map { (at: max($0.at, host.heldUntil), id: $0.id) } : nil
        if key?.at == host.enlisted?.at && key?.id == host.enlisted?.id { return }
        counter += 1
        hosts[name]!.enlisted = key
        hosts[name]!.stamp = counter
        if let key { ready.insert(Ready(at: key.at, id: key.id, host: name, stamp: counter)) }
    }

    private func isCurrent(_ queued: Queued) -> Bool {
        resources[queued.id]?.ticket == queued.ticket
    }

    private mutating func start(_ id: Int64, on host: String, now: Int64) {
        let head = hosts[host]!.queue.removeMin()
        assert(head.id == id && isCurrent(head), "a host's entry names its earliest resource")
        hosts[host]!.fetching += 1
        resources[id]!.fetching = true
        resources[id]!.ticket = 0
        counter += 1
        flights[id] = Flight(host: host, startedAt: now, number: counter)
        fastLane.append((id, counter))
        fastCount += 1
    }

    /// Moves fetches that have run `slowAfter` from the fast lane to the slow
    /// one, oldest first, while the slow lane has room.
    private mutating func moveSlowFetches(now: Int64) {
        while let oldest = oldestFastFetch(), now - oldest >= rules.slowAfter, slowCount < rules.slowLane {
            let id = fastLane.removeFirst().id
            flights[id]!.slow = true
            fastCount -= 1
            slowCount += 1
        }
    }

    /// When the oldest fetch in the fast lane started (entries of fetches
    /// ended or moved are dropped on the way).
    private mutating func oldestFastFetch() -> Int64? {
        while let first = fastLane.first {
            if let flight = flights[first.id], flight.number == first.number, !flight.slow, !flight.answered { return flight.startedAt }
            fastLane.removeFirst()
        }
        return nil
    }

    /// Forgets a host that has nothing left (no resource, no fetch, no hold),
    /// and sheds its queue's stale entries once they are most of it.
    private mutating func tidy(_ name: String, now: Int64) {
        guard let host = hosts[name] else { return }
        if host.members == 0 && host.fetching == 0 && host.answering == 0 && host.heldUntil <= now {
            hosts[name] = nil
        } else if host.stale > 16 && host.stale * 2 > host.queue.count {
            let current = resources
            hosts[name]!.queue.removeAll { current[$0.id]?.ticket != $0.ticket }
            hosts[name]!.stale = 0
        }
    }

    /// Rebuilds `ready` from the hosts' current entries, once stale ones outnumber them.
    private mutating func rebuildReady() {
        ready = Heap(hosts.compactMap { name, host in host.enlisted.map { Ready(at: $0.at, id: $0.id, host: name, stamp: host.stamp) } })
    }
}
