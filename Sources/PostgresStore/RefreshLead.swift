import Logging
import PostgresNIO

/// The one node of a cluster that polls the source: whoever holds a session
/// advisory lock on a connection of its own. The lock goes with the
/// connection, so a node that dies (or loses PostgreSQL) lets it go, and the
/// next node to ask, within one refresh interval, takes it.
actor RefreshLead {
    private let location: PostgresLocation
    private let logger: Logger
    private var connection: PostgresConnection?

    init(location: PostgresLocation, logger: Logger) {
        self.location = location
        self.logger = logger
    }

    /// Whether this node holds the lock now (taking it when free).
    func holds() async -> Bool {
        if let connection {
            // Still ours while the connection answers.
            if (try? await connection.query("SELECT 1", logger: logger).collect()) != nil { return true }
            self.connection = nil
            try? await connection.close()
        }
        do {
            let configuration = try location.connectionConfiguration
            let logger = logger
            let candidate = try await within(location.connectTimeout, "no answer from \(location)") {
                try await PostgresConnection.connect(configuration: configuration, id: 2, logger: logger)
            }
            var taken = false
            for try await got in try await candidate.query("SELECT pg_try_advisory_lock(\(PostgresSchema.refreshLock))", logger: logger).decode(Bool.self) {
                taken = got
            }
            if taken {
                connection = candidate
                logger.info("this node polls the source", metadata: ["store": "\(location)"])
            } else {
                try? await candidate.close()
            }
            return taken
        } catch {
            return false
        }
    }

    /// Lets the lock go (at shutdown), so another node takes over at once.
    func release() async {
        guard let connection else { return }
        self.connection = nil
        // Unlocked first: a close alone frees the lock only once PostgreSQL has
        // seen the session end, and a node asking at once could still find it
        // held (PostgresStoreTests failed so in one CI run).
        _ = try? await connection.query("SELECT pg_advisory_unlock(\(PostgresSchema.refreshLock))", logger: logger)
        try? await connection.close()
    }
}
