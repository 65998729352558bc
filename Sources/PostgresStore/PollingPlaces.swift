import Logging
import PostgresWire
import Synchronization
import WarmfeedCore

/// The nodes of a cluster that poll the sources, and this node's place among
/// them: each holds a session advisory lock `(pollingLocks, place)` on a
/// connection of its own, the lowest place free when it came. The locks go
/// with their connections, so a node that dies (or loses PostgreSQL) lets its
/// place go, and the others see it gone at their next ask (`pg_locks`), and
/// take its hosts (`PollingShare`).
///
/// Its calls block (each wait with the connect timeout as its deadline): the
/// store runs them on its reader threads.
final class PollingPlaces: Sendable {
    /// The most nodes that poll at once; a node past them polls nothing until one goes.
    static let most: Int32 = 64

    private let location: PostgresLocation
    private let logger: Logger
    private let held = Mutex<(connection: PQConnection, place: Int32)?>(nil)

    init(location: PostgresLocation, logger: Logger) {
        self.location = location
        self.logger = logger
    }

    /// This node's share now, taking a place when it holds none; nil when
    /// PostgreSQL cannot be reached or every place is taken.
    func share() -> PollingShare? {
        held.withLock { held in
            if let current = held {
                // Still ours while the connection answers; the same question tells who else polls.
                if let places = try? livePlaces(current.connection) { return PollingShare(place: Int(current.place), places: places) }
                current.connection.close()
                held = nil
            }
            guard let candidate = try? PQConnection(location.libpqParameters(application: "warmfeed-polling"), deadline: deadline())
            else { return nil }
            for place in 0..<Self.most {
                let taken = try? candidate.query(
                    "SELECT pg_try_advisory_lock($1::int4, $2::int4)", [.int64(Int64(PostgresSchema.pollingLocks)), .int64(Int64(place))],
                    until: deadline())
                guard let taken else { break }
                guard taken.bool(0, 0) == true else { continue }
                guard let places = try? livePlaces(candidate) else { break }
                held = (candidate, place)
                logger.info("this node polls a share of the sources", metadata: ["place": "\(place)", "nodes polling": "\(places.count)"])
                return PollingShare(place: Int(place), places: places)
            }
            candidate.close()
            return nil
        }
    }

    /// Lets the place go (at shutdown), so the others take its hosts at once.
    func release() {
        held.withLock { held in
            guard let current = held else { return }
            held = nil
            // Unlocked first: a close alone frees the lock only once PostgreSQL has
            // seen the session end, and a node asking at once could still find it
            // held (PostgresStoreTests failed so in one CI run).
            _ = try? current.connection.query(
                "SELECT pg_advisory_unlock($1::int4, $2::int4)", [.int64(Int64(PostgresSchema.pollingLocks)), .int64(Int64(current.place))],
                until: deadline())
            current.connection.close()
        }
    }

    /// The places held now in this database, by any node.
    private func livePlaces(_ connection: PQConnection) throws -> [Int] {
        // Two-key advisory locks show their keys as classid and objid, with objsubid 2.
        let result = try connection.query(
            """
            SELECT objid::int8 FROM pg_locks
            WHERE locktype = 'advisory' AND objsubid = 2 AND granted AND classid = $1::int8::oid
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            """, [.int64(Int64(PostgresSchema.pollingLocks))], until: deadline())
        return (0..<result.count).compactMap { result.int64($0, 0).map(Int.init) }
    }

    private func deadline() -> ContinuousClock.Instant { .now + location.connectTimeout }
}
