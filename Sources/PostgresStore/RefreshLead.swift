import Logging
import PostgresWire
import Synchronization

/// The one node of a cluster that polls the source: whoever holds a session
/// advisory lock on a connection of its own. The lock goes with the
/// connection, so a node that dies (or loses PostgreSQL) lets it go, and the
/// next node to ask, within one refresh interval, takes it.
///
/// Its calls block (each wait with the connect timeout as its deadline): the
/// store runs them on its reader threads.
final class RefreshLead: Sendable {
    private let location: PostgresLocation
    private let logger: Logger
    private let connection = Mutex<PQConnection?>(nil)

    init(location: PostgresLocation, logger: Logger) {
        self.location = location
        self.logger = logger
    }

    /// Whether this node holds the lock now (taking it when free).
    func holds() -> Bool {
        connection.withLock { held in
            if let current = held {
                // Still ours while the connection answers.
                if (try? current.query("SELECT 1", until: .now + location.connectTimeout)) != nil { return true }
                current.close()
                held = nil
            }
            guard let candidate = try? PQConnection(location.libpqParameters(application: "warmfeed-lead"), deadline: .now + location.connectTimeout)
            else { return false }
            let taken = (try? candidate.query(
                "SELECT pg_try_advisory_lock($1)", [.int64(PostgresSchema.refreshLock)], until: .now + location.connectTimeout
            ))?.bool(0, 0) == true
            guard taken else {
                candidate.close()
                return false
            }
            held = candidate
            logger.info("this node polls the source", metadata: ["store": "\(location)"])
            return true
        }
    }

    /// Lets the lock go (at shutdown), so another node takes over at once.
    func release() {
        connection.withLock { held in
            guard let current = held else { return }
            held = nil
            // Unlocked first: a close alone frees the lock only once PostgreSQL has
            // seen the session end, and a node asking at once could still find it
            // held (PostgresStoreTests failed so in one CI run).
            _ = try? current.query("SELECT pg_advisory_unlock($1)", [.int64(PostgresSchema.refreshLock)], until: .now + location.connectTimeout)
            current.close()
        }
    }
}
