import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization
import WarmfeedCore

/// The feed's items in PostgreSQL (postgres-nio), so several servers share
/// one feed: the same items, the same order, the same cursors (the epoch is
/// the store's), and deep links by page number as an index seek on `seq`,
/// as in `SQLiteFeedStore`.
///
/// Reads go through postgres-nio's connection pool, each bounded by
/// `queryTimeout`. A write runs on one connection of its own in one
/// transaction (see `PostgresFeedStore+Writing.swift`) and announces the new
/// revision with NOTIFY; `run()` listens, so every node drops its stale pages
/// within a second with no polling per request.
public final class PostgresFeedStore: FeedStore {
    /// Where the store is.
    public let location: PostgresLocation
    /// The feed's epoch, kept in the store: every node's cursors carry the same one.
    public let epoch: UInt32
    /// The longest a read waits for PostgreSQL before the page gets a 503.
    public let queryTimeout: Duration
    let client: PostgresClient
    let logger: Logger
    /// The pool works from `open` to `close` (the store's service closes it at shutdown).
    private let pool: Task<Void, Never>
    /// The store's write count: the same number on every node once it has heard.
    private let writes: Atomic<Int>
    private let health = Mutex(Health())
    /// Whether `health` holds a problem, kept with it under its lock: a read
    /// on the request path looks here, and takes the lock every thread would
    /// share only when there is something to see or to clear.
    private let troubled = Atomic<Bool>(false)
    private let lead: RefreshLead
    /// Each reading thread's own connection, for deep pages (`preparedPage`):
    /// up to twice the pool's size, room for the server's handler threads (8
    /// by default) and the few others that read a page (the start-up warm);
    /// a thread past it reads through the pool.
    let threadConnections: ThreadConnections

    /// Whether PostgreSQL answers, as the listener and the last read saw it.
    /// Only the listener's view makes reads fail at once: a read that timed
    /// out under load says the store is slow, not gone, and the next read tries.
    struct Health {
        /// The listening connection is lost (PostgreSQL stopped, or unreachable).
        var listenerDown: String?
        /// The last read failed for want of an answer.
        var readFailed: String?

        var answering: Bool { listenerDown == nil && readFailed == nil }
        var problem: String? { listenerDown ?? readFailed }
    }

    /// What `open` did: the migrations it applied (for the log).
    public let appliedMigrations: [String]

    /// Connects to `location`, migrates the schema (waiting while another node
    /// does), and starts the pool. Fails within the connect timeout, naming the
    /// server, when it cannot reach it, log in, or find the database.
    public static func open(
        _ location: PostgresLocation, connections: Int = 8, queryTimeout: Duration = .seconds(2), logger: Logger
    ) async throws -> PostgresFeedStore {
        let configuration: PostgresConnection.Configuration
        do {
            configuration = try location.connectionConfiguration
        } catch {
            throw StoreUnavailable("cannot set up TLS for \(location): \(error)")
        }
        let opened: PostgresSchema.Opened
        do {
            // A server that accepts the connection but never answers is cut at the connect timeout too.
            let connection = try await within(location.connectTimeout, "PostgreSQL at \(location.host):\(location.port) did not answer within \(location.connectTimeout)") {
                try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            }
            do {
                opened = try await PostgresSchema.migrate(connection, location: location, logger: logger)
                try? await connection.close()
            } catch {
                try? await connection.close()
                throw error
            }
        } catch let error as StoreSchemaError {
            throw error
        } catch {
            throw StoreUnavailable(PostgresProblem.explain(error, location))
        }
        let store = try PostgresFeedStore(location: location, opened: opened, connections: connections, queryTimeout: queryTimeout, logger: logger)
        await store.openConnections(min(connections, 4))
        return store
    }

    /// Opens `count` pool connections now, with a query on each at once: a
    /// node's first readers (a burst of thumbnails) would otherwise each wait
    /// for a new connection and its SCRAM handshake. Not the pool's
    /// `minimumConnections`: a pool that keeps connections up by itself keeps
    /// trying while PostgreSQL is away, and its shutdown then waited on those
    /// attempts (a test process hung in CI).
    private func openConnections(_ count: Int) async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<count { group.addTask { _ = try? await self.rows("SELECT pg_sleep(0.01)") } }
        }
    }

    private init(location: PostgresLocation, opened: PostgresSchema.Opened, connections: Int, queryTimeout: Duration, logger: Logger) throws {
        self.location = location
        self.logger = logger
        self.queryTimeout = queryTimeout
        epoch = opened.epoch
        appliedMigrations = opened.applied
        writes = Atomic(opened.writes)
        client = PostgresClient(configuration: try location.clientConfiguration(connections: connections), backgroundLogger: logger)
        let client = client
        pool = Task { await client.run() }
        lead = RefreshLead(location: location, logger: logger)
        threadConnections = ThreadConnections(parameters: location.libpqParameters, limit: connections * 2)
    }

    /// The store's write count, as far as this node has heard: pages are kept under it.
    public var revision: Int { writes.load(ordering: .acquiring) }

    /// Moves the revision forward to `count` (never back: notices may arrive out of order).
    func heard(writes count: Int) {
        var seen = writes.load(ordering: .relaxed)
        while seen < count {
            let (exchanged, original) = writes.compareExchange(expected: seen, desired: count, ordering: .acquiringAndReleasing)
            if exchanged { return }
            seen = original
        }
    }

    /// What the admin view shows.
    public var status: StoreStatus {
        let health = health.withLock { $0 }
        return StoreStatus(backend: "postgresql", location: "\(location)", answering: health.answering, problem: health.problem)
    }

    /// The listener is connected again: PostgreSQL answers.
    func noteListening() {
        health.withLock {
            $0 = Health()
            troubled.store(false, ordering: .releasing)
        }
    }

    /// A read was answered: a read that had failed before is forgotten.
    func noteAnswered() {
        guard troubled.load(ordering: .acquiring) else { return }
        health.withLock {
            $0.readFailed = nil
            troubled.store(!$0.answering, ordering: .releasing)
        }
    }

    /// Fails at once while the listener knows PostgreSQL is down, rather than wait out the timeout.
    func throwIfDown() throws {
        guard troubled.load(ordering: .acquiring) else { return }
        if let down = health.withLock({ $0.listenerDown }) { throw StoreUnavailable(down) }
    }

    /// The listener lost PostgreSQL (or a read found no answer): reads fail at once
    /// while the listener is down, and the admin view says so.
    func noteDown(_ error: any Error, listener: Bool) {
        let reason = PostgresProblem.explain(error, location)
        let wasAnswering = health.withLock { health in
            defer {
                if listener { health.listenerDown = reason } else { health.readFailed = reason }
                troubled.store(true, ordering: .releasing)
            }
            return health.answering
        }
        if wasAnswering { logger.error("the feed store is not answering", metadata: ["store": "\(location)", "reason": "\(reason)"]) }
    }

    /// Runs `body` on a pooled connection of its own, within 30 s: background
    /// work (rendering rows ahead) that holds a transaction for a batch. Its
    /// failures are its own: they do not mark the store down for readers.
    func withConnection<Value: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> Value) async throws -> Value {
        let client = client
        return try await within(.seconds(30), "PostgreSQL at \(location.host):\(location.port) did not finish a batch within 30 s") {
            try await client.withConnection(body)
        }
    }

    /// Runs `query` on a pooled connection, collecting its rows, within `queryTimeout`.
    func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await answer { client in try await client.query(query).collect() }
    }

    /// Runs a prepared statement on a pooled connection (parsed and planned
    /// once per connection), collecting its rows, within `queryTimeout`.
    func rows<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws -> [Statement.Row] where Statement.Row: Sendable {
        try await answer { client in
            var rows: [Statement.Row] = []
            for try await row in try await client.execute(statement) { rows.append(row) }
            return rows
        }
    }

    /// Asks PostgreSQL through the pool within `queryTimeout`, noting whether it answers.
    private func answer<Value: Sendable>(_ ask: @escaping @Sendable (PostgresClient) async throws -> Value) async throws -> Value {
        try throwIfDown()
        let client = client
        do {
            let value = try await within(queryTimeout, "PostgreSQL at \(location.host):\(location.port) did not answer within \(queryTimeout)") {
                try await ask(client)
            }
            noteAnswered()
            return value
        } catch let error as PostgresDecodingError {
            throw error
        } catch let error as PSQLError where error.serverInfo != nil {
            // The server answered (with an error of the query's own): it is up.
            throw error
        } catch {
            noteDown(error, listener: false)
            throw StoreUnavailable(PostgresProblem.explain(error, location))
        }
    }

    /// Closes the refresh lead's connection and the pool. Each step is given
    /// a bound: a shutdown that waits on a connection postgres-nio never ends
    /// (postgres-nio #599, #601) would hold a node's SIGTERM, or a test, forever.
    public func close() async {
        let lead = lead
        await waitBounded("the refresh lead's connection to close") { await lead.release() }
        threadConnections.close()
        pool.cancel()
        let pool = pool
        await waitBounded("the connection pool to close") { await pool.value }
    }

    /// Waits for `step` at most `closeLimit`, then goes on, with a warning that says what did not end.
    private func waitBounded(_ what: String, _ step: @escaping @Sendable () async -> Void) async {
        if (try? await within(Self.closeLimit, "waited for \(what)", step)) == nil {
            logger.warning("waited \(Self.closeLimit) for \(what); going on", metadata: ["store": "\(location)"])
        }
    }

    /// The longest each step of `close` (and the listener's end) is waited for.
    static let closeLimit: Duration = .seconds(5)

    /// Listens for other nodes' writes until graceful shutdown (or until the
    /// calling task is cancelled), reconnecting while PostgreSQL is away; then
    /// closes the store. The listener runs in a task of its own, so the end of
    /// `run` waits for it at most `closeLimit`, whatever the connection does.
    public func run() async {
        let listening = Task { await self.keepListening() }
        try? await cancelWhenGracefulShutdown {
            while true { try await Task.sleep(for: .seconds(3600)) }
        }
        listening.cancel()
        await waitBounded("the listening connection to end") { await listening.value }
        await close()
    }

    /// Listening connections, one after the other, until cancelled.
    private func keepListening() async {
        var pause: Duration = .milliseconds(250)
        while !Task.isCancelled {
            do {
                try await listen()
                pause = .milliseconds(250)
            } catch is CancellationError {
                break
            } catch {
                if Task.isCancelled { break }
                noteDown(error, listener: true)
            }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .seconds(1))
        }
    }

    /// One listening connection, for as long as it lasts.
    private func listen() async throws {
        let configuration = try location.connectionConfiguration
        let logger = logger
        let connection = try await within(location.connectTimeout, "PostgreSQL at \(location.host):\(location.port) did not answer within \(location.connectTimeout)") {
            try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        }
        do {
            try await listen(on: connection)
        } catch {
            try? await connection.close()
            throw error
        }
        try? await connection.close()
        throw StoreUnavailable("the listening connection to \(location) ended")
    }

    private func listen(on connection: PostgresConnection) async throws {
        let logger = logger
        try await withTaskCancellationHandler {
            try await connection.listen(on: PostgresSchema.revisionChannel) { notifications in
                // Listening now: a write made while this node was away shows in the count.
                for try await count in try await connection.query("SELECT writes FROM feed WHERE id = 1", logger: logger).decode(Int64.self) {
                    self.heard(writes: Int(count))
                }
                self.noteListening()
                for try await notification in notifications {
                    if let count = Int(notification.payload) { self.heard(writes: count) }
                }
            }
        } onCancel: {
            connection.close().whenComplete { _ in }
        }
    }

    /// Whether this node polls the source: it holds the refresh advisory lock,
    /// on a connection of its own; a node that dies lets it go with its connection.
    public func leadsRefresh() async -> Bool {
        await lead.holds()
    }
}
