import Synchronization

/// One libmicrohttpd worker thread's share of what the server keeps about its
/// connections and requests.
///
/// libmicrohttpd's thread pool gives each connection to one worker thread
/// for its whole life, and calls back for it on that thread only; so each
/// worker keeps its own connection table, its own count of requests in
/// flight and its own table of suspended connections, and a request touches
/// only its own worker's. The other threads reach a shard rarely: the head
/// sweeper twice a second, a handler resuming a suspended connection, the
/// admin view. Limits are the server's divided among the shards, as
/// libmicrohttpd divides its own connection limit among its workers.
final class WorkerShard: Sendable {
    /// The connections of this worker, and which to shed.
    let connections: Mutex<ConnectionTable>
    /// Requests between their request line and the last byte of their answer.
    let requestsInFlight = Atomic<Int>(0)
    /// Connections suspended for an async handler, by wait, and their waits'
    /// bookkeeping, under one lock. Whoever removes a connection from here (its
    /// handler, the caps or deadline of `SuspendedWaits`, or shutdown) is the one that resumes it.
    let suspended: Mutex<Suspensions>
    /// The handler threads this worker's `.later` work runs on, taken in turn.
    private let handlers: [HandlerExecutor]
    /// Only this worker's thread turns it: the word is never shared.
    private let turn = Atomic<Int>(0)

    init(limits: ConnectionTable.Limits, waits: SuspendedWaits.Limits, handlers: [HandlerExecutor]) {
        connections = Mutex(ConnectionTable(limits: limits))
        suspended = Mutex(Suspensions(waits: SuspendedWaits(limits: waits)))
        precondition(!handlers.isEmpty)
        self.handlers = handlers
    }

    /// The handler thread for the next `.later` work of this worker.
    func nextHandler() -> HandlerExecutor {
        handlers[turn.wrappingAdd(1, ordering: .relaxed).oldValue % handlers.count]
    }
}

/// A worker's suspended connections and the bookkeeping of their waits.
struct Suspensions {
    /// One suspended connection: how to resume it with an answer, with what
    /// when its wait is cut short, and the work to cancel then.
    struct Entry {
        /// Hands the answer to the connection's thread and wakes it (a
        /// libmicrohttpd resume, or a post to an event loop's mailbox).
        var resume: @Sendable (Answer) -> Void
        var otherwise: Answer
        var work: Task<Void, Never>?
    }

    var entries: [SuspendedWaits.ID: Entry] = [:]
    var waits: SuspendedWaits

    /// Takes the entry of `id` out, to resume it; nil when someone else did.
    mutating func take(_ id: SuspendedWaits.ID) -> Entry? {
        waits.ended(id)
        return entries.removeValue(forKey: id)
    }
}

/// Which shard each worker thread uses: given out in turn to threads as they
/// first open a connection, and looked up without a lock after.
final class ShardAssignment: @unchecked Sendable {
    // @unchecked Sendable: the table is only touched through the atomics in it.
    private let shards: Int
    private let next = Atomic<Int>(0)
    /// Shard + 1 by thread number (`ThreadSlot`); 0 for a thread not seen yet.
    private let table: UnsafeMutablePointer<Atomic<Int>>
    private let capacity = 4096

    init(shards: Int) {
        self.shards = max(1, shards)
        table = .allocate(capacity: capacity)
        for index in 0..<capacity { (table + index).initialize(to: Atomic(0)) }
    }

    deinit {
        table.deinitialize(count: capacity)
        table.deallocate()
    }

    /// The shard of thread number `thread`.
    func shard(ofThread thread: Int) -> Int {
        guard thread < capacity else { return thread % shards }
        let known = table[thread].load(ordering: .relaxed)
        if known > 0 { return known - 1 }
        let given = next.add(1, ordering: .relaxed).oldValue % shards
        let (exchanged, original) = table[thread].compareExchange(expected: 0, desired: given + 1, ordering: .relaxed)
        return exchanged ? given : original - 1
    }
}
