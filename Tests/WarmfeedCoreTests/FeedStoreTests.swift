import Foundation
import GRDB
import Testing
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
@Suite(.serialized) struct FeedStoreTests {
    @Test func keysetPagingVisitsEveryItemOnceInOrder() throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        try store.upsert(DemoFeed.items(count: 100_000))
        #expect(try store.count() == 100_000)

        var seen = Set<String>()
        var expectedPosition = 1
        var previous: (Int64, Int64)?
        var request = PageRequest.number(1)
        var pages = 0
        while true {
            let page = try #require(try store.page(request, size: 30))
            pages += 1
            #expect(page.firstPosition == expectedPosition)
            #expect(page.total == 100_000)
            for item in page.items {
                #expect(seen.insert(item.guid).inserted, "duplicate \(item.guid)")
                if let previous { #expect((item.published, item.id!) < previous, "out of order at \(item.guid)") }
                previous = (item.published, item.id!)
            }
            expectedPosition += page.items.count
            guard let older = page.older else { break }
            request = .after(older)
        }
        #expect(seen.count == 100_000)
        #expect(pages == 3334)
    }

    @Test func deepLinksAgreeWithCursorsAndUseIndexes() throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        try store.upsert(DemoFeed.items(count: 100_000))
        // Page 30,000 at 3 items a page: the rank arithmetic must land exactly.
        let deep = try #require(try store.page(.number(30_000), size: 3))
        #expect(deep.firstPosition == 29_999 * 3 + 1)
        let next = try #require(try store.page(.after(deep.older!), size: 3))
        #expect(next.firstPosition == 30_000 * 3 + 1)
        let byNumber = try #require(try store.page(.number(30_001), size: 3))
        #expect(byNumber.items.map(\.guid) == next.items.map(\.guid))
        let back = try #require(try store.page(.before(next.newer!), size: 3))
        #expect(back.items.map(\.guid) == deep.items.map(\.guid))
        #expect(try store.page(.number(33_335), size: 3) == nil)
        #expect(try store.page(.number(33_334), size: 3)?.items.count == 1)

        // A deep page costs what page 1 costs: every read is an index search, never a scan.
        let queue = try DatabaseQueue(path: temporary.path)
        for sql in [SQLiteFeedStore.SQL.pageByNumber, SQLiteFeedStore.SQL.pageAfter, SQLiteFeedStore.SQL.pageBefore, SQLiteFeedStore.SQL.total] {
            let plan = try queue.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: StatementArguments(Array(repeating: 1, count: sql.filter { $0 == "?" }.count))!)
                    .map { $0["detail"] as String }
            }
            #expect(!plan.isEmpty && plan.allSatisfy { $0.hasPrefix("SEARCH item USING") }, "\(sql) scans: \(plan)")
            #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(sql) sorts: \(plan)")
        }
    }

    @Test func insertsAtTheTopWhilePagingNeitherRepeatNorSkip() throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        try store.upsert((1...100).map { item($0, published: Int64($0) * 1000) })
        let first = try #require(try store.page(.number(1), size: 10))
        #expect(first.items.first?.guid == "g100")
        #expect(first.items.last?.guid == "g91")

        // 25 new items arrive at the top while the reader is on page 1.
        let revision = store.revision
        try store.upsert((101...125).map { item($0, published: Int64($0) * 1000) })
        #expect(store.revision > revision)

        let second = try #require(try store.page(.after(first.older!), size: 10))
        #expect(second.items.map(\.guid) == (81...90).reversed().map { "g\($0)" })
        #expect(second.firstPosition == 25 + 11)
        #expect(second.total == 125)
        // The page before page 2 is now the old page 1, then the new items above it.
        let newer = try #require(try store.page(.before(second.newer!), size: 10))
        #expect(newer.items.map(\.guid) == first.items.map(\.guid))
        #expect(newer.newer != nil)
    }

    @Test func ranksStayDenseWhenItemsLandInTheMiddleOrAtTheBottom() throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        try store.upsert((1...50).map { item($0 * 2, published: Int64($0) * 2000) })
        try store.upsert([item(51, published: 51_000), item(0, published: -5), item(77, published: 77_000)])
        // An edit that moves an item in time renumbers too.
        var moved = item(10, published: 999_999)
        moved.title = "moved"
        let summary = try store.upsert([moved])
        #expect(summary.updated == 1)

        let everything = try #require(try store.page(.number(1), size: 1000))
        #expect(everything.total == 53)
        #expect(everything.items.first?.guid == "g10")
        #expect(everything.items.last?.guid == "g0")
        let queue = try DatabaseQueue(path: temporary.path)
        let ranks = try queue.read { db in try Int64.fetchAll(db, sql: "SELECT seq FROM item ORDER BY published, id") }
        #expect(ranks == Array(1...53))
        // Deep links follow the new ranks.
        let page3 = try #require(try store.page(.number(3), size: 10))
        #expect(page3.items.map(\.guid) == Array(everything.items[20..<30]).map(\.guid))
    }

    @Test func upsertIsIdempotentAndUpdatesInPlace() throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        let items = (1...20).map { item($0, published: Int64($0)) }
        #expect(try store.upsert(items).inserted == 20)
        let revision = store.revision
        let again = try store.upsert(items)
        #expect(again.unchanged == 20 && again.inserted == 0 && again.updated == 0)
        #expect(store.revision == revision, "an import that changes nothing must not invalidate rendered pages")
        var edited = items[4]
        edited.title = "Edited"
        #expect(try store.upsert([edited]).updated == 1)
        let page = try #require(try store.page(.number(2), size: 10))
        #expect(page.items.contains { $0.guid == "g5" && $0.title == "Edited" })
        #expect(try store.count() == 20)
    }

    @Test func anEmptyFeedHasAnEmptyFirstPageAndNoSecond() throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        #expect(try store.count() == 0)
        let page = try #require(try store.page(.number(1), size: 30))
        #expect(page.items.isEmpty)
        #expect(page.older == nil && page.newer == nil)
        #expect(try store.page(.number(2), size: 30) == nil)
        let stray = Cursor(epoch: store.epoch, published: 0, id: 0)
        #expect(try store.page(.after(stray), size: 30) == nil)
    }

    @Test func theEpochSurvivesAReopen() throws {
        let temporary = try TemporaryStore()
        let epoch = temporary.store.epoch
        try temporary.store.upsert([item(1, published: 1)])
        let reopened = try temporary.reopen()
        #expect(reopened.epoch == epoch)
        #expect(try reopened.count() == 1)
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
