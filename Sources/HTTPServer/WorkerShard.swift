import Synchronization

/// One event-loop worker's share of what the server keeps about its
/// connections and requests.
///
/// Each connection lives on one worker for its whole life, so each worker
/// keeps its own connection table, its own count of requests in flight and
/// its own table of suspended connections, and a request touches only its own
/// worker's. The other threads reach a shard rarely: the head sweeper twice a
/// second, a handler resuming a suspended connection, the admin view. Limits
/// are the server's divided among the shards.
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
        /// Hands the answer to the connection's thread and wakes it (a post
        /// to its worker's mailbox).
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
