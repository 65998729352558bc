import Logging
import PostgresWire
import ServiceLifecycle
import Synchronization
import WarmfeedCore
import Workers

/// The feed's items in PostgreSQL, so several servers share one feed: the
/// same items, the same order, the same cursors (the epoch is the store's),
/// and deep links by page number as an index seek on `seq`, as in
/// `SQLiteFeedStore`.
///
/// Every connection is libpq's (Debian's libpq, behind `PostgresWire`), each
/// used by one thread at a time, each wait on the server with a deadline:
/// - a deep page is read on the handler thread's own connection
///   (`ThreadConnections`), with no other thread woken;
/// - other reads (an item for a thumbnail, a page for a copy, notes) run on a
///   few reader threads of the store's own (`readers`), each on its own
///   connection, within `queryTimeout`, and their async callers wait on a
///   continuation;
/// - a write runs on the caller's thread (the importer's own), on a
///   connection of its own, in one transaction (`PostgresFeedStore+Writing`),
///   and announces the new revision with NOTIFY;
/// - `run()` listens on a thread of its own (`RevisionListener`), so every
///   node drops its stale pages within a second with no polling per request.
/// No TLS stack is built for it: libpq brings Debian's OpenSSL.
public final class PostgresFeedStore: FeedStore {
    /// Where the store is.
    public let location: PostgresLocation
    /// The feed's epoch, kept in the store: every node's cursors carry the same one.
    public let epoch: UInt32
    /// The longest a read waits for PostgreSQL before the page gets a 503.
    public let queryTimeout: Duration
    let logger: Logger
    /// The threads that read for async callers, and their connections (one each).
    let readers: WorkerPool
    let readerConnections: ThreadConnections
    /// The store's write count: the same number on every node once it has heard.
    private let writes: Atomic<Int>
    private let health = Mutex(Health())
    /// Whether `health` holds a problem, kept with it under its lock: a read
    /// on the request path looks here, and takes the lock every thread would
    /// share only when there is something to see or to clear.
    private let troubled = Atomic<Bool>(false)
    private let places: PollingPlaces
    /// Each reading thread's own connection, for deep pages (`preparedPage`):
    /// up to twice `connections`, room for the server's handler threads (8
    /// by default) and the few others that read a page (the start-up warm);
    /// a thread past it reads on the store's reader threads.
    let threadConnections: ThreadConnections
    /// This node's own copy of the feed's prepared rows, when it keeps one.
    let copy: NodeCopy?

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
    /// does), and starts the reader threads. Fails within the connect timeout,
    /// naming the server, when it cannot reach it, log in, or find the database.
    ///
    /// `connections` bounds the backends the store opens for reads: half of
    /// it (at least two) for the reader threads, twice it for threads that read
    /// deep pages on their own.
    ///
    /// With `copyFolder`, the node keeps its own copy of the feed's prepared
    /// rows there (`NodeCopy`), and reads deep pages from it while it is current.
    public static func open(
        _ location: PostgresLocation, connections: Int = 8, queryTimeout: Duration = .seconds(2), copyFolder: String? = nil, logger: Logger
    ) async throws -> PostgresFeedStore {
        let readerCount = max(2, connections / 2)
        let readers = WorkerPool(threads: readerCount, name: "warmfeed-postgres")
        let migrated: Result<PostgresSchema.Opened, any Error> = await readers.perform(cancelled: .failure(CancellationError())) {
            Result(catching: { try PostgresSchema.migrate(location, logger: logger) })
        }
        let opened: PostgresSchema.Opened
        do {
            opened = try migrated.get()
        } catch let error as StoreSchemaError {
            readers.stop()
            throw error
        } catch {
            readers.stop()
            throw StoreUnavailable(PostgresProblem.explain(error, location))
        }
        var copy: NodeCopy?
        if let copyFolder {
            do {
                copy = try NodeCopy(folder: copyFolder)
            } catch {
                logger.error("cannot keep the node's copy of the feed; every page is read from PostgreSQL", metadata: ["reason": "\(error)"])
            }
        }
        let store = PostgresFeedStore(
            location: location, opened: opened, readers: readers, readerCount: readerCount,
            connections: connections, queryTimeout: queryTimeout, copy: copy, logger: logger
        )
        await store.openConnections(readerCount)
        return store
    }

    /// Opens the reader threads' connections now, with a query on each at
    /// once: a node's first readers (a burst of thumbnails) would otherwise
    /// each wait for a new connection and its SCRAM handshake.
    private func openConnections(_ count: Int) async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<count {
                group.addTask {
                    _ = try? await self.onReader { connection, deadline throws(PQProblem) -> Void in
                        try connection.query("SELECT pg_sleep(0.01)", until: deadline)
                    }
                }
            }
        }
    }

    private init(
        location: PostgresLocation, opened: PostgresSchema.Opened, readers: WorkerPool, readerCount: Int,
        connections: Int, queryTimeout: Duration, copy: NodeCopy?, logger: Logger
    ) {
        self.location = location
        self.copy = copy
        self.logger = logger
        self.queryTimeout = queryTimeout
        self.readers = readers
        epoch = opened.epoch
        appliedMigrations = opened.applied
        writes = Atomic(opened.writes)
        readerConnections = ThreadConnections(parameters: location.libpqParameters(application: "warmfeed-reader"), limit: readerCount)
        places = PollingPlaces(location: location, logger: logger)
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
        return StoreStatus(
            backend: "postgresql", location: "\(location)", answering: health.answering, problem: health.problem, copy: copy?.status)
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

    /// Runs `body` on one of the store's reader threads, on that thread's
    /// connection, by a deadline `limit` from now (`queryTimeout` unless
    /// given), noting whether PostgreSQL answers. A query's own error is
    /// thrown as it is; no answer is `StoreUnavailable`, and marks the store
    /// down for readers unless the work is `background` (rendering rows
    /// ahead, whose failures are its own).
    func onReader<Value: Sendable>(
        within limit: Duration? = nil, background: Bool = false,
        _ body: @escaping @Sendable (PQConnection, ContinuousClock.Instant) throws(PQProblem) -> Value
    ) async throws -> Value {
        if !background { try throwIfDown() }
        let limit = limit ?? queryTimeout
        let deadline = ContinuousClock.now + limit
        let connections = readerConnections
        let outcome: Result<Value, PQProblem>?? = await readers.perform(cancelled: nil) {
            do throws(PQProblem) {
                // Nil when the connections are closed (the store is closing).
                return try connections.read(until: deadline) { connection throws(PQProblem) in try body(connection, deadline) }.map { .success($0) }
            } catch {
                return .failure(error)
            }
        }
        guard let outcome, let outcome else {
            // Not read: the caller was cancelled while the work waited for a reader
            // thread, or the store is closed. Neither says PostgreSQL is down.
            if Task.isCancelled { throw CancellationError() }
            throw StoreUnavailable("the PostgreSQL store at \(location) is closed")
        }
        switch outcome {
        case .success(let value):
            if !background { noteAnswered() }
            return value
        case .failure(let problem) where problem.isQueryError:
            // The server answered (with an error of the query's own): it is up.
            throw problem
        case .failure(let problem):
            let reason = StoreUnavailable(PostgresProblem.explain(problem, location, waited: limit))
            if !background { noteDown(reason, listener: false) }
            throw reason
        }
    }

    /// Lets the polling place go, closes every connection and stops the reader
    /// threads. Each wait is bounded by a deadline (a connection's answers)
    /// or by `closeLimit`, so a PostgreSQL that stopped answering cannot hold
    /// a node's SIGTERM, or a test, for long.
    public func close() async {
        let places = places
        let released: Bool = await readers.perform(cancelled: false) {
            places.release()
            return true
        }
        if !released { places.release() }
        threadConnections.close()
        readerConnections.close()
        readers.stop()
    }

    /// The longest the end of `run` waits for the listener.
    static let closeLimit: Duration = .seconds(5)

    /// Listens for other nodes' writes until graceful shutdown (or until the
    /// calling task is cancelled), reconnecting while PostgreSQL is away; then
    /// closes the store. The listener runs on a thread of its own, which sees
    /// the stop within a quarter of a second, and is waited for at most `closeLimit`.
    public func run() async {
        let listener = RevisionListener(store: self)
        let keeper = copy.map { NodeCopyKeeper(store: self, copy: $0) }
        try? await cancelWhenGracefulShutdown {
            while true { try await Task.sleep(for: .seconds(3600)) }
        }
        listener.stop()
        keeper?.stop()
        let until = ContinuousClock.now + Self.closeLimit
        while !listener.ended || keeper?.ended == false, ContinuousClock.now < until { try? await Task.sleep(for: .milliseconds(20)) }
        if !listener.ended || keeper?.ended == false {
            logger.warning("waited \(Self.closeLimit) for the listening connection to end; going on", metadata: ["store": "\(location)"])
        }
        await close()
    }

    /// This node's share of the polling: its place (an advisory lock on a
    /// connection of its own) among the places held (`PollingPlaces`).
    public func pollingShare() async -> PollingShare? {
        let places = places
        return await readers.perform(cancelled: nil) { places.share() }
    }
}
