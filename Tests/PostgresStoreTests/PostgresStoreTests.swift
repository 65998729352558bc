import Foundation
import PostgresWire
import Testing

@testable import FeedIngest
@testable import PostgresStore
@testable import Warmfeed
@testable import WarmfeedCore

/// What only the PostgreSQL store has: URLs, start-up failures named for an
/// operator, migrations shared by nodes starting together, the refresh lead,
/// index seeks, and copying a feed in and out.
@Suite(.serialized) struct PostgresStoreTests {
    @Test func thisRunHasAPostgreSQL() {
        // scripts/test starts one; a run without it would test SQLite alone and look green.
        let setting = ProcessInfo.processInfo.environment["WARMFEED_TEST_POSTGRES"]
        #expect(setting != nil, "WARMFEED_TEST_POSTGRES is not set: run scripts/test (it starts PostgreSQL), or set it to skip")
    }

    @Test func urlsAreReadAsLibpqReadsThem() throws {
        let full = try PostgresLocation("postgres://feed:p%40ss@db.example:6543/warm?sslmode=require&connect_timeout=3")
        #expect(full.user == "feed" && full.password == "p@ss" && full.host == "db.example" && full.port == 6543)
        #expect(full.database == "warm" && full.sslMode == .require && full.connectTimeout == .seconds(3))
        #expect("\(full)" == "db.example:6543/warm", "no password in what is logged or shown")
        let short = try PostgresLocation("postgresql://localhost")
        #expect(short.user == "postgres" && short.port == 5432 && short.database == "postgres" && short.sslMode == .prefer)
        for bad in [
            "mysql://localhost/db", "postgres:///db", "postgres://h:99999/db", "postgres://h/db?sslmode=sometimes",
            "postgres://h/db?connect_timeout=0", "postgres://h/db?pool=3",
        ] {
            #expect(throws: PostgresLocation.Problem.self, "\(bad)") { try PostgresLocation(bad) }
        }
        #expect((try? PostgresLocation("postgres://u:secret@/db")) == nil)
        let problem = #expect(throws: PostgresLocation.Problem.self) { try PostgresLocation("postgres://u:secret@/db") }
        #expect(problem?.description.contains("secret") == false, "a password never reaches a message")
    }

    @Test func theStoreOptionTakesSQLitePathsAndPostgresURLsAndRefusesTheRest() throws {
        #expect(try StoreLocation(nil, dataFolder: "/d") == .sqlite(path: "/d/feed.sqlite"))
        #expect(try StoreLocation("sqlite:/x/feed.db", dataFolder: "/d") == .sqlite(path: "/x/feed.db"))
        #expect(try StoreLocation("postgres://u@h/db", dataFolder: "/d") == .postgres(try PostgresLocation("postgres://u@h/db")))
        for bad in ["mysql://h/db", "feed.sqlite", "sqlite:", "redis://h"] {
            let error = #expect(throws: ConfigurationError.self, "\(bad)") { try StoreLocation(bad, dataFolder: "/d") }
            #expect(error?.description.contains("--store") == true)
        }
    }

    private func openFailure(_ url: String) async -> String? {
        do {
            let store = try await PostgresFeedStore.open(try PostgresLocation(url), logger: testLogger)
            await store.close()
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func aWrongPasswordAMissingDatabaseAndAClosedPortAreEachNamed() async throws {
        let admin = try TestDatabase.admin()
        let server = "\(admin.host):\(admin.port)"
        let wrong = await openFailure("postgres://\(admin.user):not-the-password@\(server)/postgres?sslmode=disable")
        #expect(wrong?.contains("wrong password") == true && wrong?.contains(server) == true, "\(wrong ?? "opened")")
        #expect(wrong?.contains("not-the-password") == false)
        let missing = await openFailure("postgres://\(admin.user):\(admin.password ?? "")@\(server)/no_such_feed?sslmode=disable")
        #expect(missing?.contains("no database \"no_such_feed\"") == true, "\(missing ?? "opened")")
        // A port nothing listens on.
        let closed = try freePort()
        let refused = await openFailure("postgres://u:p@127.0.0.1:\(closed)/db?sslmode=disable")
        #expect(refused?.contains("127.0.0.1:\(closed)") == true && refused?.contains("refused") == true, "\(refused ?? "opened")")
    }

    @Test func aServerThatNeverAnswersFailsAtTheConnectTimeout() async throws {
        let (listener, port) = try silentListener()
        defer { close(listener) }
        let silent = await openFailure("postgres://u:p@127.0.0.1:\(port)/db?sslmode=disable&connect_timeout=1")
        #expect(silent?.contains("127.0.0.1:\(port)") == true && silent?.contains("did not answer") == true, "\(silent ?? "opened")")
    }

    @Test func nodesStartingAtOnceMigrateOnceAndANewerStoreIsRefused() async throws {
        let url = try await TestDatabase.create()
        defer { Task { await TestDatabase.drop(url) } }
        let location = try PostgresLocation(url)
        let stores = try await withThrowingTaskGroup(of: PostgresFeedStore.self) { group in
            for _ in 0..<6 { group.addTask { try await PostgresFeedStore.open(location, logger: testLogger) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(stores.filter { !$0.appliedMigrations.isEmpty }.count == 1, "one node migrates, the others wait and find nothing to do")
        #expect(Set(stores.map(\.epoch)).count == 1, "one feed, one epoch")
        try await upsert(stores[0], [item(1, published: 1)])
        for store in stores { await store.close() }

        let connection = try storeConnection(location)
        let rows = try connection.run("SELECT version::int8 FROM warmfeed_migration ORDER BY version")
        let versions = (0..<rows.count).compactMap { rows.int64($0, 0).map(Int.init) }
        #expect(versions == PostgresSchema.migrations.map(\.version))
        try connection.run("INSERT INTO warmfeed_migration (version, name) VALUES (99, 'from the future')")
        connection.close()
        let refusal = await openFailure(url)
        #expect(refusal?.contains("newer warmfeed") == true, "\(refusal ?? "opened")")
        // Refused, and untouched.
        let count = try withStoreConnection(location) { connection in
            try connection.run("SELECT COUNT(*) FROM item").int64(0, 0).map(Int.init)
        }
        #expect(count == 1)
        await TestDatabase.drop(url)
    }

    @Test func aReadCancelledWhileItWaitsForAReaderThreadDoesNotMarkTheStoreDown() async throws {
        try await TestStore.with(.postgres) { made in
            try await upsert(made.store, (1...50).map { item($0, published: Int64($0)) })
            let location = try PostgresLocation(made.address)
            // Two reader threads (the fewest), each about to wait on a locked table.
            let store = try await PostgresFeedStore.open(location, connections: 2, queryTimeout: .seconds(20), logger: testLogger)
            let blocker = try storeConnection(location)
            try blocker.run("BEGIN")
            try blocker.run("LOCK TABLE item IN ACCESS EXCLUSIVE MODE")
            let held = (0..<2).map { _ in Task { try await store.item(id: 1) } }
            // Both readers are now busy: a third read waits in the queue, and its caller gives up.
            try await Task.sleep(for: .milliseconds(300))
            let waiting = Task { try await store.item(id: 2) }
            try await Task.sleep(for: .milliseconds(100))
            waiting.cancel()
            await #expect(throws: CancellationError.self) { try await waiting.value }
            #expect(store.status.answering, "a cancelled caller says nothing of PostgreSQL")
            try blocker.run("COMMIT")
            blocker.close()
            for read in held { #expect(try await read.value?.id == 1) }
            #expect(store.status.answering)
            await store.close()
        }
    }

    @Test func aReadThatTimesOutFailsAloneAndTheNextReadIsServed() async throws {
        try await TestStore.with(.postgres) { made in
            try await upsert(made.store, (1...50).map { item($0, published: Int64($0)) })
            let store = try await PostgresFeedStore.open(try PostgresLocation(made.address), queryTimeout: .milliseconds(300), logger: testLogger)
            #expect(try await store.page(.number(2), size: 10)?.items.count == 10)
            // Another session holds the table: the read waits past its timeout, and gives up.
            let location = try PostgresLocation(made.address)
            let blocker = try storeConnection(location)
            try blocker.run("BEGIN")
            try blocker.run("LOCK TABLE item IN ACCESS EXCLUSIVE MODE")
            await #expect(throws: StoreUnavailable.self) { try await store.page(.number(3), size: 10) }
            #expect(store.status.answering == false)
            try blocker.run("COMMIT")
            blocker.close()
            // Slow is not gone: the next read is tried, and answered.
            var page: Page?
            for _ in 0..<20 where page == nil {
                page = try? await store.page(.number(3), size: 10)
                if page == nil { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(page?.items.count == 10)
            #expect(store.status.answering)
            await store.close()
        }
    }

    @Test func deepLinksAndCursorsAreIndexSeeks() async throws {
        try await TestStore.with(.postgres) { made in
            try await upsert(made.store, DemoFeed.items(count: 20_000))
            let location = try PostgresLocation(made.address)
            try withStoreConnection(location) { connection in
                try connection.run("ANALYZE item")
                // The statements the store prepares, with values in place of their parameters.
                func filled(_ sql: String, _ values: [String]) -> String {
                    values.enumerated().reversed().reduce(sql) { $0.replacingOccurrences(of: "$\($1.offset + 1)", with: $1.element) }
                }
                for sql in [
                    filled(PageStatement.ByNumber.sql, ["300000", "30"]),
                    filled(PageStatement.After.sql, ["1700000000000", "5", "30"]),
                    filled(PageStatement.Before.sql, ["1600000000000", "5", "30"]),
                ] {
                    let rows = try connection.run("EXPLAIN " + sql)
                    let plan = (0..<rows.count).compactMap { rows.string($0, 0) }.joined(separator: "\n")
                    #expect(plan.contains("Index Scan"), "\(sql): \(plan)")
                    #expect(!plan.contains("Seq Scan") && !plan.contains("Sort"), "\(sql): \(plan)")
                }
            }
        }
    }

    @Test func copyStoreMovesAFeedToPostgreSQLAndBackKeepingLinksAndCursors() async throws {
        let sqlite = try await TestStore.make(.sqlite)
        let postgres = try await TestStore.make(.postgres)
        let back = try await TestStore.make(.sqlite)
        try await upsert(sqlite.store, DemoFeed.items(count: 2_500))
        let pictured = try #require(try await sqlite.store.page(.number(3), size: 30)?.items.first?.id)
        try await sqlite.store.setPreviews([pictured: 0x0a0b0c_0d0e0f])
        // The folders of images imported (the server reads pictures' files beneath them only).
        try await sqlite.store.setNote(ImportedFolders.note, "/srv/pictures\n/srv/more")
        let page = try #require(try await sqlite.store.page(.number(40), size: 30))
        let token = try #require(page.older).token

        #expect(try await StoreCopy.copy(from: sqlite.store, to: postgres.store, batch: 700) == 2_500)
        // The copy is read through a fresh opening, as the servers will after the move.
        let moved = try await postgres.another()
        #expect(moved.epoch == sqlite.store.epoch)
        #expect(try await moved.count() == 2_500)
        #expect(try await moved.page(.number(40), size: 30)?.items == page.items)
        let next = try #require(try await moved.page(.after(try Cursor.parse(token, epoch: moved.epoch)), size: 30))
        #expect(next.items == (try await sqlite.store.page(.number(41), size: 30))?.items)
        #expect(try await moved.item(id: pictured)?.preview == 0x0a0b0c_0d0e0f)
        #expect(await ImportedFolders(store: moved).folders(refresh: false) == ["/srv/pictures", "/srv/more"])
        // New items after the move get ids past the copied ones.
        try await upsert(moved, [item(9_999_999, published: DemoFeed.newest + 1)])
        #expect(try await moved.page(.number(1), size: 1)?.items.first?.id ?? 0 > 2_500)

        // And back, into an empty SQLite file.
        #expect(try await StoreCopy.copy(from: moved, to: back.store) == 2_501)
        let returned = try await back.another()
        #expect(returned.epoch == sqlite.store.epoch)
        #expect(try await returned.page(.number(41), size: 30)?.items == (try await moved.page(.number(41), size: 30))?.items)

        // Into a store that holds a feed: refused, nothing written.
        await #expect(throws: StoreCopy.Failure.self) { try await StoreCopy.copy(from: sqlite.store, to: moved) }
        #expect(try await moved.count() == 2_501)
        await moved.close()
        await returned.close()
        await sqlite.remove()
        await postgres.remove()
        await back.remove()
    }
}

func freePort() throws -> Int {
    let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(probe) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(probe, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A libpq connection to the store's database, for a test's own statements.
func storeConnection(_ location: PostgresLocation) throws -> PQConnection {
    try PQConnection(location.libpqParameters(application: "warmfeed-test"), deadline: .now + .seconds(30))
}

/// Runs `body` on one connection to the store's database, closed after.
func withStoreConnection<T>(_ location: PostgresLocation, _ body: (PQConnection) throws -> T) throws -> T {
    let connection = try storeConnection(location)
    defer { connection.close() }
    return try body(connection)
}

extension PQConnection {
    /// Runs a test's statement, allowed a minute.
    @discardableResult
    func run(_ sql: String) throws -> PQRows {
        try query(sql, until: .now + .seconds(60))
    }
}
