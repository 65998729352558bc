import Foundation
import GRDB
import Testing

@testable import SQLiteStore
@testable import WarmfeedCore

/// A store in a fresh temporary folder: a real SQLite file, removed afterwards.
final class TemporaryStore {
    let folder: URL
    let store: SQLiteFeedStore
    var path: String { folder.appendingPathComponent("feed.sqlite").path }

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        store = try SQLiteFeedStore(path: folder.appendingPathComponent("feed.sqlite").path)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    func reopen() throws -> SQLiteFeedStore { try SQLiteFeedStore(path: path) }
}

func item(_ n: Int, published: Int64) -> FeedItem {
    FeedItem(guid: "g\(n)", title: "Item \(n)", summary: "", published: published)
}

// Serialized: two of these tests write and page 100,000 items synchronously for
// several seconds; run side by side they held both of Swift's cooperative
// threads (2 cores) and starved the async tests of other suites into timeouts.
// What every backend does is checked once for all of them, by
// `FeedStoreConformanceTests` (Tests/PostgresStoreTests); here, what only the
// SQLite file has: its query plans and its migrations.
@Suite struct FeedStoreTests {
    @Test func deepLinksUseIndexes() async throws {
        let temporary = try TemporaryStore()
        try temporary.store.upsert(DemoFeed.items(count: 2_000))
        // A deep page costs what page 1 costs: every read is an index search, never a scan.
        let queue = try DatabaseQueue(path: temporary.path)
        let statements = SQLiteFeedStore.SQL.self
        for sql in [
            statements.pageByNumber, statements.pageAfter, statements.pageBefore, statements.total, statements.seqOlder, statements.seqNewer,
            statements.placesDown, statements.placesUp,
        ] {
            let plan = try await queue.read { db in
                try Row.fetchAll(
                    db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: StatementArguments(Array(repeating: 1, count: sql.filter { $0 == "?" }.count))!
                )
                .map { $0["detail"] as String }
            }
            #expect(!plan.isEmpty && plan.allSatisfy { $0.hasPrefix("SEARCH item USING") }, "\(sql) scans: \(plan)")
            #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(sql) sorts: \(plan)")
            // A prepared page's rows are read from the index alone, with no table row.
            if [statements.placesDown, statements.placesUp].contains(sql) {
                #expect(plan.allSatisfy { $0.contains("COVERING INDEX item_page") }, "\(sql): \(plan)")
            }
        }
    }

    @Test func aStoreMigratedByANewerWarmfeedIsRefused() async throws {
        let temporary = try TemporaryStore()
        try temporary.store.upsert([item(1, published: 1)])
        let queue = try DatabaseQueue(path: temporary.path)
        try await queue.write { db in try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v9: from the future')") }
        #expect(throws: StoreSchemaError.self) { try temporary.reopen() }
        // Refused, and untouched: the item is still there for the newer binary.
        let count = try await queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") }
        #expect(count == 1)
    }

    @Test func theDemoFeedIsDeterministicAndVaried() {
        let a = DemoFeed.items(count: 500)
        let b = DemoFeed.items(count: 500)
        #expect(a == b)
        #expect(Set(a.map(\.guid)).count == 500)
        #expect(zip(a, a.dropFirst()).allSatisfy { $0.published < $1.published })
        let ratios = Set(a.compactMap { item in item.imageWidth.map { Double($0) / Double(item.imageHeight!) } })
        #expect(ratios.count >= 5)
        let titleLengths = a.map(\.title.count)
        #expect(titleLengths.max()! > 3 * titleLengths.min()!)
        #expect(a.contains { $0.summary.isEmpty } && a.contains { $0.summary.count > 300 })
    }

    @Test func theDemoFeedIsMadeOldestFirstEndingAtTheNewestTime() {
        let items = DemoFeed.items(count: 2000)
        #expect(items.map(\.guid) == (1...2000).map { "demo-\($0)" })
        #expect(items.last?.published == DemoFeed.newest)
        let gaps = zip(items, items.dropFirst()).map { $1.published - $0.published }
        #expect(gaps.allSatisfy { (30_000...(30_000 + 599_999 * 36)).contains($0) })
        // A longer feed is the shorter one's newest items with older ones below: item n of the
        // newest-first draw does not depend on the count.
        let longer = DemoFeed.items(count: 3000)
        #expect(longer.suffix(2000).map(\.title) == items.map(\.title))
        #expect(longer.suffix(2000).map(\.published) == items.map(\.published))
    }
}
