import PostgresWire
import Synchronization
import ThreadSlots

/// Each reading thread's own libpq connection, for the reads on a request's
/// path: a thread takes the connection in its own slot (`ThreadSlot`), so no
/// read takes a lock another thread takes, and the read's wait is a `poll` on
/// that thread's own socket, with nothing handed to another thread.
///
/// Connections are made on a thread's first read, at most `limit` in all
/// (each is a PostgreSQL backend); a thread past the limit, or without a
/// slot, gets nil and reads another way. A connection that failed is made
/// again on the thread's next read.
final class ThreadConnections: Sendable {
    private let slots: [Slot]
    private let made = Atomic<Int>(0)
    private let limit: Int
    private let parameters: [(String, String)]
    private let closed = Atomic<Bool>(false)
    private let remadeCount = Atomic<Int>(0)

    /// Connections made again after the server ended one that had served.
    var remade: Int { remadeCount.load(ordering: .relaxed) }

    /// Room for `limit` connections with libpq's `parameters`. Thread numbers are
    /// the process's (`ThreadSlot`), shared by every thread that asks, so the
    /// slots cover many more than this store's readers: a reader thread whose
    /// number is past them gets no connection, and its read fails as if the
    /// store were closed (seen once with 256, in the test process, where every
    /// suite's servers, pools and libvips threads are alive at once).
    init(parameters: [(String, String)], limit: Int, slots: Int = 4096) {
        self.parameters = parameters
        self.limit = limit
        self.slots = (0..<slots).map { _ in Slot() }
    }

    /// Runs `body` on this thread's connection, made first if need be, all by
    /// `deadline`. A connection that had served before and is found lost (the
    /// server restarted, or closed it while idle) is made again once and
    /// `body` run again; a deadline missed or a server's error is not retried.
    /// Nil, and `body` not run, when this thread has no connection and may not make one.
    func read<Value: Sendable>(
        until deadline: ContinuousClock.Instant, _ body: (PQConnection) throws(PQProblem) -> Value
    ) throws(PQProblem) -> Value? {
        let slot = ThreadSlot.current
        guard slot < slots.count, !closed.load(ordering: .relaxed) else { return nil }
        return try slots[slot].connection.withLock { (connection: inout PQConnection?) throws(PQProblem) -> Value? in
            // Seen again under the slot's lock, which `close` takes after setting it: no connection outlives `close`.
            guard !closed.load(ordering: .relaxed) else { return nil }
            var fresh = false
            if connection?.isOpen != true {
                if connection == nil {
                    guard made.add(1, ordering: .relaxed).newValue <= limit else {
                        made.subtract(1, ordering: .relaxed)
                        return nil
                    }
                }
                connection = nil
                connection = try open(until: deadline)
                fresh = true
            }
            do throws(PQProblem) {
                return try body(connection!)
            } catch  where !fresh && error.connectionLost {
                // Lost before this read got an answer: once more, on a new connection.
                remadeCount.add(1, ordering: .relaxed)
                connection = nil
                connection = try open(until: deadline)
                return try body(connection!)
            }
        }
    }

    /// A new connection for a slot that has a place; when it cannot be made,
    /// the place is given back (the slot is left empty).
    private func open(until deadline: ContinuousClock.Instant) throws(PQProblem) -> PQConnection {
        do {
            return try PQConnection(parameters, deadline: deadline)
        } catch {
            made.subtract(1, ordering: .relaxed)
            throw error
        }
    }

    /// Closes every connection; reads after this get nil.
    func close() {
        closed.store(true, ordering: .relaxed)
        for slot in slots {
            slot.connection.withLock { connection in
                connection?.close()
                connection = nil
            }
        }
    }

    /// One thread's place: only that thread takes its lock (and `close`, once).
    private final class Slot: Sendable {
        let connection = Mutex<PQConnection?>(nil)
    }
}
