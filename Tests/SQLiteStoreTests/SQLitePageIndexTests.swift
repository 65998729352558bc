import Foundation
import GRDB
import Synchronization
import Testing

@testable import PageFiles
@testable import SQLiteStore
@testable import WarmfeedCore

/// The page index (`feed.sqlite-pages`): a deep page found and read with no
/// SQLite step. It must answer every page exactly as SQLite's covering index
/// does, after every kind of write, and whenever it cannot be trusted (a
/// writer at work or dead mid-write, a file removed, cut or left behind by an
/// earlier warmfeed) the page comes from SQLite, never from a stale record,
/// until the index is rebuilt.
@Suite struct SQLitePageIndexTests {
    typealias Rows = RowLogTests

    /// What a page says, for comparing two readings of it.
    static func describe(_ page: PreparedPage?) -> String {
        guard let page else { return "no page" }
        let rows = page.rows.map { row in
            let bytes =
                row.prepared.isEmpty
                ? "item \(page.item(of: row)?.id ?? -1) \(page.item(of: row)?.title ?? "")" : String(decoding: page.bytes[row.prepared], as: UTF8.self)
            return "\(row.id) \(row.preview.map(String.init) ?? "-") \(row.hasPicture) \(bytes)"
        }
        return """
            total \(page.total) first \(page.firstPosition) older \(page.older.map { "\($0.published)/\($0.id)" } ?? "-") \
            newer \(page.newer.map { "\($0.published)/\($0.id)" } ?? "-") corrupt \(page.corrupt)
            \(rows.joined(separator: "\n"))
            """
    }

    /// Every page by number, one past the end included, through the store's
    /// page path against SQLite's own answer; answers how many the index
    /// answered by itself.
    @discardableResult
    static func expectSameAsSQLite(
        _ store: SQLiteFeedStore, size: Int = 10, tag: UInt32 = Rows.tag, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Int {
        let total = try store.preparedPageFromSQLite(.number(1), size: size, tag: tag)?.total ?? 0
        var answered = 0
        for number in 1...max(1, (total + size - 1) / size + 1) {
            let sqlite = try store.preparedPageFromSQLite(.number(number), size: size, tag: tag)
            let served = try store.preparedPageAtOnce(.number(number), size: size, tag: tag)
            #expect(describe(served) == describe(sqlite), "page \(number)", sourceLocation: sourceLocation)
            if let indexed = store.indexedPage(number: number, size: size, tag: tag) {
                answered += 1
                #expect(describe(indexed) == describe(sqlite), "page \(number) from the index", sourceLocation: sourceLocation)
            }
            // The pages its cursors lead to: older, and newer (read from the bottom up).
            guard let sqlite else { continue }
            for request in [sqlite.older.map(PageRequest.after), sqlite.newer.map(PageRequest.before)].compactMap({ $0 }) {
                let fromSQLite = try store.preparedPageFromSQLite(request, size: size, tag: tag)
                #expect(
                    describe(try store.preparedPageAtOnce(request, size: size, tag: tag)) == describe(fromSQLite), "\(request) of page \(number)",
                    sourceLocation: sourceLocation)
                guard let fromSQLite, !fromSQLite.rows.isEmpty else { continue }
                // Found by the cursor's own rank (the rank file).
                let cursor =
                    switch request {
                    case .after(let cursor), .before(let cursor): cursor
                    case .number: Cursor(epoch: 0, published: 0, id: 0)
                    }
                if let indexed = store.indexedPage(request, cursor: cursor, size: size, tag: tag) {
                    answered += 1
                    #expect(describe(indexed) == describe(fromSQLite), "\(request) of page \(number) by its cursor's rank", sourceLocation: sourceLocation)
                }
            }
        }
        return answered
    }

    /// How many pages `expectSameAsSQLite` reads of a feed of `total` items:
    /// every page by number and one past the end, and every page a cursor
    /// leads to (each page's older, and each page's newer, but the last's
    /// and the first's).
    static func pageCount(_ total: Int, size: Int = 10) -> Int {
        let pages = (total + size - 1) / size
        return pages + 1 + 2 * max(0, pages - 1)
    }

    static func header(_ store: SQLiteFeedStore) throws -> PageIndex.Header {
        try #require(store.index.header())
    }

    /// Whether the store's index agrees with the store, as a write transaction would check.
    static func agrees(_ store: SQLiteFeedStore) async throws -> Bool {
        let index = store.index
        return try await store.poolForWriting.read { db in try index.agrees(with: db) }
    }

    /// Writes `change` over the index file's header, as a crash or another process would leave it.
    static func spoilHeader(_ path: String, _ change: (inout PageIndex.Header) -> Void) throws {
        let index = try PageIndex(path: path + "-pages", rows: RowLog(path: path + "-rows"))
        var header = try #require(index.header())
        change(&header)
        let fields = [header.count, header.stamp, header.writes, header.rowsSize, header.ranksSize].map { UInt64(bitPattern: $0) }
        var bytes: [UInt8] = []
        for value in [header.magic, header.generation] + fields { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path + "-pages"))
        try handle.write(contentsOf: bytes)
        try handle.close()
    }

    @Test func theIndexAnswersEveryPageAsSQLiteDoesAfterEveryKindOfWrite() async throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        var items = DemoFeed.items(count: 95)
        try store.upsert(items)
        // Not prepared yet: every row comes from its item, through SQLite.
        #expect(try Self.expectSameAsSQLite(store) == 1, "only the page past the end")
        try await Rows.prepare(store)
        #expect(try Self.expectSameAsSQLite(store) == Self.pageCount(95))

        // Newer items at the top: older ranks keep their records.
        let newest = items.map(\.published).max()!
        let newer = (0..<10).map { FeedItem(guid: "new-\($0)", title: "New \($0)", summary: "", published: newest + 60 + Int64($0)) }
        try store.upsert(newer)
        try Self.expectSameAsSQLite(store)
        try await Rows.prepare(store)
        #expect(try Self.expectSameAsSQLite(store) == Self.pageCount(105))

        // Older items in the middle: every rank above them moves.
        let oldest = items.map(\.published).min()!
        let middle = (0..<7).map { FeedItem(guid: "mid-\($0)", title: "Middle \($0)", summary: "", published: (oldest + newest) / 2 + Int64($0)) }
        try store.upsert(middle)
        try Self.expectSameAsSQLite(store)
        try await Rows.prepare(store)
        #expect(try Self.expectSameAsSQLite(store) == Self.pageCount(112))

        // An item changed in place, and one moved to the top.
        items[40].title = "Changed in place"
        items[60].published = newest + 3600
        try store.upsert([items[40], items[60]])
        try Self.expectSameAsSQLite(store)
        try await Rows.prepare(store)
        #expect(try Self.expectSameAsSQLite(store) == Self.pageCount(112))

        // Previews kept, and rows forgotten.
        let ids = try #require(try store.preparedPageFromSQLite(.number(3), size: 10, tag: Rows.tag)).rows.map(\.id)
        try await store.setPreviews(Dictionary(uniqueKeysWithValues: ids.map { ($0, $0 * 7919) }))
        #expect(try Self.expectSameAsSQLite(store) == Self.pageCount(112))
        #expect(store.indexedPage(number: 3, size: 10, tag: Rows.tag)??.rows.allSatisfy { $0.preview == $0.id * 7919 } == true)
        try await store.forgetPreparedRows([ids[0]])
        try Self.expectSameAsSQLite(store)
        #expect(store.indexedPage(number: 3, size: 10, tag: Rows.tag) == nil, "a forgotten row sends its page to SQLite")
        try await Rows.prepare(store)
        #expect(try Self.expectSameAsSQLite(store) == Self.pageCount(112))

        // Another opening of the same file (as `warmfeed import` beside a server) writes; this one reads it.
        let other = try temporary.reopen()
        try other.upsert((0..<5).map { FeedItem(guid: "other-\($0)", title: "Other \($0)", summary: "", published: newest + 7200 + Int64($0)) })
        try await Rows.prepare(other)
        #expect(try Self.expectSameAsSQLite(store) == Self.pageCount(117))
    }

    /// A cursor names an item and its date when the page was served. The
    /// item may move since (a new date), or the rank file may name another
    /// rank: the page after the cursor is then still the page after that
    /// place, as SQLite reads it, never the page after the item's new rank.
    @Test func aCursorWhoseItemMovedOrWhoseRankIsWrongGetsSQLitesPage() async throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        let items = DemoFeed.items(count: 60)
        try store.upsert(items)
        try await Rows.prepare(store)
        let page = try #require(try store.preparedPageFromSQLite(.number(3), size: 10, tag: Rows.tag))
        let older = try #require(page.older)
        let newer = try #require(page.newer)
        // The cursors' items move to the top.
        let newest = try #require(items.map(\.published).max())
        var moved: [FeedItem] = []
        for (offset, id) in [older.id, newer.id].enumerated() {
            var item = try #require(try await store.item(id: id))
            item.published = newest + 60 * Int64(offset + 1)
            moved.append(item)
        }
        try store.upsert(moved)
        try await Rows.prepare(store)
        for request in [PageRequest.after(older), .before(newer)] {
            let cursor =
                switch request {
                case .after(let cursor), .before(let cursor): cursor
                case .number: older
                }
            #expect(store.indexedPage(request, cursor: cursor, size: 10, tag: Rows.tag) == nil, "\(request): the item is elsewhere now")
            #expect(
                Self.describe(try store.preparedPageAtOnce(request, size: 10, tag: Rows.tag))
                    == Self.describe(try store.preparedPageFromSQLite(request, size: 10, tag: Rows.tag)))
        }

        // A rank file that names rank 1 for every item: no cursor's page is read from it.
        let ranks = temporary.path + "-pages-ranks"
        let size = try #require(try FileManager.default.attributesOfItem(atPath: ranks)[.size] as? Int)
        var ones: [UInt8] = []
        for _ in 0..<(size / 8) { withUnsafeBytes(of: Int64(1).littleEndian) { ones.append(contentsOf: $0) } }
        try Data(ones).write(to: URL(fileURLWithPath: ranks))
        let current = try #require(try store.preparedPageFromSQLite(.number(2), size: 10, tag: Rows.tag))
        for request in [current.older.map(PageRequest.after), current.newer.map(PageRequest.before)].compactMap({ $0 }) {
            let cursor =
                switch request {
                case .after(let cursor), .before(let cursor): cursor
                case .number: older
                }
            #expect(store.indexedPage(request, cursor: cursor, size: 10, tag: Rows.tag) == nil)
        }
        try Self.expectSameAsSQLite(store)
    }

    @Test func rowsOfOtherTemplatesArePagedBySQLiteUntilTheyArePreparedAgain() async throws {
        let temporary = try TemporaryStore()
        try temporary.store.upsert(DemoFeed.items(count: 40))
        try await Rows.prepare(temporary.store)
        let otherTag: UInt32 = 0xBEEF
        #expect(temporary.store.indexedPage(number: 2, size: 10, tag: otherTag) == nil)
        try Self.expectSameAsSQLite(temporary.store, tag: otherTag)
        let page = try #require(try temporary.store.preparedPageAtOnce(.number(2), size: 10, tag: otherTag))
        #expect(page.rows.allSatisfy { $0.itemIndex != nil && $0.prepared.isEmpty })
        // Swept with the new templates: the index answers again.
        var after: Int64 = 0
        while let batch = try await temporary.store.prepareRows(
            tag: otherTag, sweep: true, after: after, limit: 16,
            render: { PreparedRowTag.seal(Array("<row \($0.id ?? 0)>\($0.title)</row>".utf8), tag: otherTag) })
        {
            after = batch.last
        }
        #expect(try Self.expectSameAsSQLite(temporary.store, tag: otherTag) == Self.pageCount(40))
    }

    @Test func aRemovedOrCutIndexIsNeverTrustedAndIsRebuilt() async throws {
        let temporary = try TemporaryStore()
        try temporary.store.upsert(DemoFeed.items(count: 60))
        try await Rows.prepare(temporary.store)
        let file = temporary.path + "-pages"
        // Cut in the middle of its records: pages past the cut come from SQLite, the same pages.
        let size = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
        #expect(truncate(file, off_t(size / 2)) == 0)
        #expect(temporary.store.indexedPage(number: 1, size: 10, tag: Rows.tag) == nil, "the newest ranks are past the cut")
        try Self.expectSameAsSQLite(temporary.store)
        // The store's upkeep sees the file is short, and rebuilds it.
        await temporary.store.mendIndex()
        #expect(try Self.expectSameAsSQLite(temporary.store) == Self.pageCount(60))

        // Cut to nothing: no header, nothing trusted; a new opening rebuilds it.
        #expect(truncate(file, 0) == 0)
        #expect(temporary.store.indexedPage(number: 1, size: 10, tag: Rows.tag) == nil)
        try Self.expectSameAsSQLite(temporary.store)
        #expect(try Self.expectSameAsSQLite(try temporary.reopen()) == Self.pageCount(60))

        // The rank file cut to nothing: cursors' pages are asked of SQLite (the
        // same pages), and a new opening rebuilds it.
        #expect(truncate(file + "-ranks", 0) == 0)
        let older = try #require(try temporary.store.preparedPageFromSQLite(.number(2), size: 10, tag: Rows.tag)?.older)
        #expect(temporary.store.indexedPage(.after(older), cursor: older, size: 10, tag: Rows.tag) == nil)
        try Self.expectSameAsSQLite(temporary.store)
        let afterCut = try temporary.reopen()
        #expect(afterCut.indexedPage(.after(older), cursor: older, size: 10, tag: Rows.tag) != nil)
        #expect(try Self.expectSameAsSQLite(afterCut) == Self.pageCount(60))

        // Removed: a new opening makes it again from the item table.
        try FileManager.default.removeItem(atPath: file)
        let reopened = try temporary.reopen()
        #expect(FileManager.default.fileExists(atPath: file))
        #expect(try Self.expectSameAsSQLite(reopened) == Self.pageCount(60))
    }

    @Test func aRemovedOrCutRowFileSendsItsRowsBackThroughSQLite() async throws {
        let temporary = try TemporaryStore()
        try temporary.store.upsert(DemoFeed.items(count: 50))
        try await Rows.prepare(temporary.store)
        let rows = temporary.path + "-rows"
        let size = try #require(try FileManager.default.attributesOfItem(atPath: rows)[.size] as? Int)
        #expect(truncate(rows, off_t(size / 2)) == 0)
        // Rows past the cut cannot be read whole: their pages come from SQLite, their rows from their items.
        try Self.expectSameAsSQLite(temporary.store)
        Rows.expectEachRowIsItsOwn(try Rows.pages(temporary.store))
        // A new opening forgets the places past the cut and rebuilds the index; preparing again brings the index back.
        let reopened = try temporary.reopen()
        try Self.expectSameAsSQLite(reopened)
        try await Rows.prepare(reopened)
        #expect(try Self.expectSameAsSQLite(reopened) == Self.pageCount(50))

        try FileManager.default.removeItem(atPath: rows)
        let again = try temporary.reopen()
        try Self.expectSameAsSQLite(again)
        #expect(try Rows.pages(again).flatMap(\.rows).allSatisfy { $0.itemIndex != nil })
        try await Rows.prepare(again)
        #expect(try Self.expectSameAsSQLite(again) == Self.pageCount(50))
    }

    @Test func aWriterThatDiedMidWriteLeavesAnIndexNoReaderTrustsUntilItIsRebuilt() async throws {
        let temporary = try TemporaryStore()
        try temporary.store.upsert(DemoFeed.items(count: 30))
        try await Rows.prepare(temporary.store)
        // Died between the two halves of a write: the generation stays odd.
        try Self.spoilHeader(temporary.path) { $0.generation |= 1 }
        #expect(temporary.store.indexedPage(number: 1, size: 10, tag: Rows.tag) == nil)
        try Self.expectSameAsSQLite(temporary.store)
        let reopened = try temporary.reopen()
        #expect(try Self.header(reopened).isSettled)
        #expect(try Self.expectSameAsSQLite(reopened) == Self.pageCount(30))

        // Died after changing the index but before its transaction committed:
        // the index names a count of writes the store never had.
        try Self.spoilHeader(temporary.path) { $0.stamp += 1 }
        #expect(try await !Self.agrees(reopened))
        await reopened.mendIndex()
        #expect(try await Self.agrees(reopened))
        #expect(try Self.expectSameAsSQLite(reopened) == Self.pageCount(30))
        try Self.spoilHeader(temporary.path) { $0.stamp += 1 }
        #expect(try Self.expectSameAsSQLite(try temporary.reopen()) == Self.pageCount(30))
    }

    @Test func aWriteThatDoesNotCommitLeavesTheIndexDistrusted() async throws {
        let temporary = try TemporaryStore()
        try temporary.store.upsert(DemoFeed.items(count: 30))
        try await Rows.prepare(temporary.store)
        struct Abandoned: Error {}
        let store = temporary.store
        // The index rewritten from what the transaction saw, then the transaction rolled back.
        #expect(throws: Abandoned.self) {
            try SQLiteFeedStore.writeIndexed(store.poolForWriting, store.index) { db in
                try db.execute(sql: "UPDATE item SET published = published + 100000 WHERE id = 3")
                try db.execute(sql: "UPDATE item SET seq = (SELECT MAX(seq) FROM item) + 1 WHERE id = 3")
                try store.index.refresh(db, ranks: [], from: 1)
                throw Abandoned()
            }
        }
        #expect(store.indexedPage(number: 1, size: 10, tag: Rows.tag) == nil, "an index of a state that never committed is not read")
        try Self.expectSameAsSQLite(store)
        await store.mendIndex()
        #expect(try Self.expectSameAsSQLite(store) == Self.pageCount(30))
    }

    @Test func anEarlierWarmfeedWritingTheStoreMakesTheIndexRebuild() async throws {
        let temporary = try TemporaryStore()
        try temporary.store.upsert(DemoFeed.items(count: 30))
        try await Rows.prepare(temporary.store)
        // What a build without the index does on import: an item inserted, the
        // ranks made dense, the write counted; nothing told to the index.
        let queue = try DatabaseQueue(path: temporary.path)
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO item (guid, title, summary, published, seq) VALUES ('old-build', 'From an earlier build', '', 1, 0)")
            try db.execute(sql: "UPDATE item SET seq = seq + 1")
            try db.execute(sql: "UPDATE meta SET value = value + 1 WHERE key = 'writes'")
        }
        try queue.close()
        #expect(try await !Self.agrees(temporary.store))
        await temporary.store.mendIndex()
        #expect(try await Self.agrees(temporary.store))
        #expect(try Self.expectSameAsSQLite(temporary.store) < Self.pageCount(31), "the new row's page is not prepared")
        let served = try #require(try temporary.store.preparedPageAtOnce(.number(4), size: 10, tag: Rows.tag))
        #expect(served.rows.last.flatMap(served.item(of:))?.title == "From an earlier build")
        try await Rows.prepare(temporary.store)
        #expect(try Self.expectSameAsSQLite(temporary.store) == Self.pageCount(31))
    }

    /// Readers on four threads while a writer adds items at the top and in
    /// the middle and prepares them: every page read is whole, its rows are
    /// their own, and it is exactly the page of one state the store was in
    /// (each write adds one item, so a page's total names the state), whichever
    /// of the index or SQLite answered it. A reader that kept records read
    /// while a writer rewrote them would show a page of no state.
    @Test func readersOnManyThreadsWhileAWriterWritesSeePagesOfOneState() async throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        try store.upsert(DemoFeed.items(count: 200))
        try await Rows.prepare(store)
        let rounds = 120
        let done = Atomic(false)
        let problems = Mutex<[String]>([])
        let seen = Mutex<[(number: Int, after: Int64?, total: Int, ids: [Int64])]>([])
        // Each reader reads at most 10,000 times: the test runs beside others
        // in parallel, some of which wait on deadlines, and must not starve
        // them (readers spinning until a starved writer finished held both
        // cores for 88 s of a CI run).
        let readers = (0..<4).map { reader in
            Thread {
                var number = reader
                var mine: [(number: Int, after: Int64?, total: Int, ids: [Int64])] = []
                for _ in 0..<10_000 where !done.load(ordering: .relaxed) {
                    number = number % 30 + 1
                    do {
                        guard let page = try store.preparedPageAtOnce(.number(number), size: 10, tag: Rows.tag) else { continue }
                        for row in page.rows where !row.prepared.isEmpty {
                            let bytes = String(decoding: page.bytes[row.prepared], as: UTF8.self)
                            if !bytes.hasPrefix("<row \(row.id)>") { problems.withLock { $0.append("row \(row.id) has another row's bytes: \(bytes)") } }
                        }
                        if page.rows.contains(where: { $0.prepared.isEmpty && page.item(of: $0)?.id != $0.id }) {
                            problems.withLock { $0.append("a row with neither bytes nor item") }
                        }
                        if page.firstPosition != (number - 1) * 10 + 1 { problems.withLock { $0.append("page \(number) at \(page.firstPosition)") } }
                        if mine.count < 50_000 { mine.append((number, nil, page.total, page.rows.map(\.id))) }
                        // And the page its older cursor leads to (a reader's scroll).
                        if let older = page.older, let next = try store.preparedPageAtOnce(.after(older), size: 10, tag: Rows.tag), mine.count < 50_000 {
                            mine.append((number, older.id, next.total, next.rows.map(\.id)))
                        }
                    } catch {
                        problems.withLock { $0.append("\(error)") }
                    }
                }
                seen.withLock { $0 += mine }
            }
        }
        for reader in readers { reader.start() }
        let base = DemoFeed.items(count: 200).map(\.published)
        for round in 0..<rounds {
            // Mostly in the middle: each such write moves every rank above it, a rewrite of most records.
            let published = round % 5 == 0 ? base.max()! + Int64(round + 1) * 60 : base.min()! + Int64(round)
            try store.upsert([FeedItem(guid: "stress-\(round)", title: "Stress \(round)", summary: "", published: published)])
            try await Rows.prepare(store)
        }
        done.store(true, ordering: .relaxed)
        while readers.contains(where: { !$0.isFinished }) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(problems.withLock { $0 }.isEmpty, "\(problems.withLock { Array($0.prefix(5)) })")

        // The feed after each write: the final order, less the items written later.
        let final = try Rows.pages(store).flatMap { $0.rows.map(\.id) }
        #expect(final.count == 200 + rounds)
        let stressIDs = try await store.poolForWriting.read { db in
            try Int64.fetchAll(db, sql: "SELECT id FROM item WHERE guid LIKE 'stress-%' ORDER BY id")
        }
        let samples = seen.withLock { $0 }
        #expect(samples.count > rounds, "the readers read while the writer wrote")
        var wrong: [String] = []
        for sample in samples {
            let later = Set(stressIDs.dropFirst(sample.total - 200))
            let feed = final.filter { !later.contains($0) }
            let expected =
                if let after = sample.after {
                    Array(feed.drop { $0 != after }.dropFirst().prefix(10))
                } else {
                    Array(feed.dropFirst((sample.number - 1) * 10).prefix(10))
                }
            if sample.ids != expected {
                wrong.append("page \(sample.number)\(sample.after.map { " after \($0)" } ?? "") of \(sample.total): \(sample.ids), not \(expected)")
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) pages of no state, such as \(wrong.prefix(3))")
        #expect(try Self.expectSameAsSQLite(store) == Self.pageCount(200 + rounds))
    }
}
