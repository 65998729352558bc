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

/// A data folder from before sources (schema v4) opened by this build.
@Suite struct SourcesMigrationTests {
    @Test func aStoreFromBeforeSourcesKeepsItsIdsRanksPreviewsAndRowPlaces() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-v4-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("feed.sqlite").path
        // A store as it is used: six items, rows rendered ahead into the row file.
        let places: [[Int64?]]
        do {
            let store = try SQLiteFeedStore(path: path)
            try store.upsert((1...6).map { FeedItem(guid: "g\($0)", title: "Item \($0)", summary: "", published: Int64($0) * 1000) })
            try await store.setPreviews([1: 7, 2: 14, 3: 21, 4: 28, 5: 35])
            _ = try await store.prepareRows(tag: 7, sweep: false, after: 0, limit: 100) { item in
                Array("row \(item.id ?? 0)".utf8)
            }
            let queue = try DatabaseQueue(path: path)
            places = try await queue.read { db in
                try Row.fetchAll(db, sql: "SELECT ahead_at, ahead_size FROM item ORDER BY id").map { [$0[0] as Int64?, $0[1] as Int64?] }
            }
            // Back to v4 as its migrations left it: one item table, a guid unique in it, no sources.
            try await queue.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE item_v4 (
                            id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT NOT NULL UNIQUE, title TEXT NOT NULL, summary TEXT NOT NULL,
                            link TEXT, imageURL TEXT, imageWidth INTEGER, imageHeight INTEGER, published INTEGER NOT NULL, seq INTEGER,
                            preview INTEGER, ahead_at INTEGER, ahead_size INTEGER
                        );
                        INSERT INTO item_v4 SELECT id, guid, title, summary, link, imageURL, imageWidth, imageHeight, published, seq,
                            preview, ahead_at, ahead_size FROM item;
                        UPDATE sqlite_sequence SET seq = 9 WHERE name = 'item_v4';
                        DROP TABLE item;
                        ALTER TABLE item_v4 RENAME TO item;
                        CREATE INDEX item_order ON item(published, id);
                        CREATE INDEX item_unprepared ON item(id) WHERE ahead_at IS NULL;
                        CREATE INDEX item_page ON item(seq, published, preview, ahead_at, ahead_size);
                        DROP TABLE source;
                        DELETE FROM grdb_migrations WHERE identifier = 'v5: sources';
                        """)
            }
            try queue.close()
        }
        #expect(places.allSatisfy { $0[0] != nil && $0[1] != nil }, "every row was rendered ahead")

        let store = try SQLiteFeedStore(path: path)
        let page = try #require(try await store.page(.number(1), size: 10))
        #expect(page.items.map(\.id) == [6, 5, 4, 3, 2, 1])
        #expect(page.items.map(\.seq) == [6, 5, 4, 3, 2, 1])
        #expect(page.items.map(\.preview) == [nil, 35, 28, 21, 14, 7])
        #expect(page.items.allSatisfy { $0.source == 0 && $0.sourceTitle == nil })
        let after = try await DatabaseQueue(path: path).read { db in
            try Row.fetchAll(db, sql: "SELECT ahead_at, ahead_size FROM item ORDER BY id").map { [$0[0] as Int64?, $0[1] as Int64?] }
        }
        #expect(after == places, "the row file's places are kept: nothing is rendered again")
        // Ids are never used twice (they name pictures): the next is above the table's high mark, not its highest id.
        try store.upsert([FeedItem(guid: "g7", title: "Item 7", summary: "", published: 7000)])
        #expect(try await store.page(.number(1), size: 1)?.items.first?.id == 10)
        // A guid is unique within its source only.
        let source = try store.write { writer in try writer.source(key: "https://a.example/feed") }.0
        let both = try store.upsert([FeedItem(guid: "g1", title: "Another g1", summary: "", published: 8000, source: source)])
        #expect(both.inserted == 1)
        #expect(try await store.count() == 8)
    }
}
