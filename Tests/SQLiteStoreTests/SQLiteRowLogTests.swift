import Foundation
import PageFiles
import Testing

@testable import SQLiteStore
@testable import WarmfeedCore

/// The SQLite store's rows rendered ahead live in a file beside the database
/// (`RowLog`). The database stays the truth: a file removed, cut short
/// or written over sends rows back to being rendered from their items, never
/// serves another row's bytes, and its rows are prepared again.
@Suite struct RowLogTests {
    static let tag: UInt32 = 0xC0FFEE
    /// A stand-in for the renderer: the item's id and title, sealed with the tag.
    static func render(_ item: FeedItem) -> [UInt8]? {
        PreparedRowTag.seal(Array("<row \(item.id ?? 0)>\(item.title)</row>".utf8), tag: tag)
    }

    /// Prepares every row waiting; answers how many were.
    @discardableResult
    static func prepare(_ store: SQLiteFeedStore, sweep: Bool = false) async throws -> Int {
        var after: Int64 = 0
        var kept = 0
        while let batch = try await store.prepareRows(tag: tag, sweep: sweep, after: after, limit: 64, render: { render($0) }) {
            kept += batch.kept
            after = batch.last
        }
        return kept
    }

    /// Every page of the feed, prepared, newest first.
    static func pages(_ store: SQLiteFeedStore, size: Int = 10) throws -> [PreparedPage] {
        var pages: [PreparedPage] = []
        var number = 1
        while let page = try store.preparedPageAtOnce(.number(number), size: size, tag: tag), !page.rows.isEmpty {
            pages.append(page)
            number += 1
        }
        return pages
    }

    /// The row's bytes as served: its prepared bytes, or nil when it came as its item.
    static func served(_ page: PreparedPage) -> [(id: Int64, prepared: String?)] {
        page.rows.map { row in
            (row.id, row.prepared.isEmpty ? nil : String(decoding: page.bytes[row.prepared], as: UTF8.self))
        }
    }

    static func expectEachRowIsItsOwn(_ pages: [PreparedPage], sourceLocation: SourceLocation = #_sourceLocation) {
        for page in pages {
            for (index, row) in served(page).enumerated() {
                if let prepared = row.prepared {
                    #expect(prepared.hasPrefix("<row \(row.id)>"), "another row's bytes: \(prepared)", sourceLocation: sourceLocation)
                } else {
                    #expect(page.item(of: page.rows[index])?.id == row.id, "row \(row.id) has neither bytes nor item", sourceLocation: sourceLocation)
                }
            }
        }
    }

    @Test func aPageIsItsRowsFromTheFileAndNoItem() async throws {
        let temporary = try TemporaryStore()
        try temporary.store.upsert(DemoFeed.items(count: 95))
        #expect(try await Self.prepare(temporary.store) == 95)
        let pages = try Self.pages(temporary.store)
        #expect(pages.count == 10)
        #expect(pages.flatMap(\.rows).count == 95)
        Self.expectEachRowIsItsOwn(pages)
        for page in pages {
            // The first row too: what names the page is an open section of its bytes.
            #expect(page.rows.allSatisfy { $0.itemIndex == nil && !$0.prepared.isEmpty })
        }
        // Cursors read the same rows as numbers.
        let older = try #require(pages[0].older)
        let newer = try #require(pages[2].newer)
        let second = try #require(try temporary.store.preparedPageAtOnce(.after(older), size: 10, tag: Self.tag))
        #expect(second.rows.map(\.id) == pages[1].rows.map(\.id))
        let back = try #require(try temporary.store.preparedPageAtOnce(.before(newer), size: 10, tag: Self.tag))
        #expect(back.rows.map(\.id) == pages[1].rows.map(\.id))
        #expect(back.firstPosition == pages[1].firstPosition)
    }

    @Test func aRemovedFileSendsRowsToTheirItemsAndTheyArePreparedAgain() async throws {
        let temporary = try TemporaryStore()
        try temporary.store.upsert(DemoFeed.items(count: 40))
        try await Self.prepare(temporary.store)
        try FileManager.default.removeItem(atPath: temporary.path + "-rows")
        let reopened = try temporary.reopen()
        let pages = try Self.pages(reopened)
        #expect(pages.flatMap(\.rows).allSatisfy { $0.itemIndex != nil && $0.prepared.isEmpty })
        // The opening forgot the places the file no longer holds: every row is prepared again.
        #expect(try await Self.prepare(reopened) == 40)
        Self.expectEachRowIsItsOwn(try Self.pages(reopened))
        #expect(try Self.pages(reopened).flatMap(\.rows).filter { !$0.prepared.isEmpty }.count == 40)
    }

    @Test func aFileCutShortServesWhatItHoldsAndTheRestFromItems() async throws {
        let temporary = try TemporaryStore()
        try temporary.store.upsert(DemoFeed.items(count: 60))
        try await Self.prepare(temporary.store)
        let file = temporary.path + "-rows"
        let size = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
        #expect(truncate(file, off_t(size / 2)) == 0)
        // While this opening still holds the places past the cut, those rows come from their items.
        let pages = try Self.pages(temporary.store)
        Self.expectEachRowIsItsOwn(pages)
        let fromFile = pages.flatMap(\.rows).filter { !$0.prepared.isEmpty }.count
        #expect(fromFile > 10 && fromFile < 50, "\(fromFile)")
        // A new opening forgets them, and they are prepared again.
        let reopened = try temporary.reopen()
        #expect(try await Self.prepare(reopened) == 60 - fromFile)
        Self.expectEachRowIsItsOwn(try Self.pages(reopened))
    }

    @Test func aFileWrittenOverNeverServesAnotherRowsBytes() async throws {
        let temporary = try TemporaryStore()
        try temporary.store.upsert(DemoFeed.items(count: 50))
        try await Self.prepare(temporary.store)
        // The file's bytes moved along by a few records' worth, as if another
        // opening had started it afresh in another order: every place now
        // holds another row's record, or the middle of one.
        let file = temporary.path + "-rows"
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        bytes = Array(bytes[1000...] + bytes[..<1000])
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let pages = try Self.pages(temporary.store)
        Self.expectEachRowIsItsOwn(pages)
        #expect(pages.flatMap(\.rows).filter { !$0.prepared.isEmpty }.isEmpty, "a row was served from another's record")
    }

    @Test func aChangedItemIsServedFromItselfUntilItsRowIsPreparedAgain() async throws {
        let temporary = try TemporaryStore()
        var items = DemoFeed.items(count: 20)
        try temporary.store.upsert(items)
        try await Self.prepare(temporary.store)
        items[5].title = "Changed"
        try temporary.store.upsert(items)
        let row = try #require(
            try Self.pages(temporary.store, size: 20).lazy.flatMap { page in page.rows.filter { page.item(of: $0)?.title == "Changed" } }.first)
        #expect(row.prepared.isEmpty)
        #expect(try await Self.prepare(temporary.store) == 1)
        let served = try Self.pages(temporary.store, size: 20).flatMap(Self.served)
        #expect(served.contains { $0.prepared?.hasSuffix(">Changed</row>") == true })
    }

    /// Where item `id`'s latest record sits in the row file: the records are read
    /// back to back from the start (item id, length, flags, the row).
    static func record(of id: Int64, in file: [UInt8]) -> Range<Int>? {
        var at = 0
        var found: Range<Int>?
        while at + RowLog.headerSize <= file.count {
            let recordID = file[at..<at + 8].withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(as: Int64.self)) }
            let length = file[at + 8..<at + 12].withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self))) }
            let end = at + RowLog.headerSize + length
            if recordID == id { found = at..<end }
            at = end
        }
        return found
    }

    @Test func aCorruptRecordIsServedFromItsItemNamedAndPreparedAgain() async throws {
        let temporary = try TemporaryStore()
        try temporary.store.upsert(DemoFeed.items(count: 30))
        try await Self.prepare(temporary.store)
        let file = temporary.path + "-rows"
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        // Three records spoilt in place: a byte of the row flipped, a byte of the
        // row's check flipped, the record's own item id flipped.
        let spoilt: [(id: Int64, offset: (Range<Int>) -> Int)] = [
            (12, { $0.upperBound - 3 }), (17, { $0.lowerBound + RowLog.headerSize + 5 }), (23, { $0.lowerBound + 1 }),
        ]
        for (id, offset) in spoilt {
            let record = try #require(Self.record(of: id, in: bytes))
            bytes[offset(record)] ^= 0x20
        }
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let pages = try Self.pages(temporary.store)
        Self.expectEachRowIsItsOwn(pages)
        #expect(pages.flatMap(\.corrupt).sorted() == [12, 17, 23])
        for id in [12, 17, 23] as [Int64] {
            let page = try #require(pages.first { $0.rows.contains { $0.id == id } })
            let row = try #require(page.rows.first { $0.id == id })
            #expect(row.prepared.isEmpty && page.item(of: row)?.id == id, "row \(id) from its item")
        }
        // Forgotten, they are prepared again (appended anew), and served from the file.
        try await temporary.store.forgetPreparedRows([12, 17, 23])
        #expect(try await Self.prepare(temporary.store) == 3)
        let again = try Self.pages(temporary.store)
        Self.expectEachRowIsItsOwn(again)
        #expect(again.flatMap(\.corrupt).isEmpty)
        #expect(again.flatMap(\.rows).filter { [12, 17, 23].contains($0.id) && !$0.prepared.isEmpty }.count == 3)
    }

    @Test func aRecordCutShortInTheFileIsCorruptAndARowOfOtherTemplatesIsNot() async throws {
        let temporary = try TemporaryStore()
        try temporary.store.upsert(DemoFeed.items(count: 10))
        try await Self.prepare(temporary.store)
        let file = temporary.path + "-rows"
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        let last = try #require(Self.record(of: 10, in: bytes))
        // The newest item's record (the last appended) cut in the middle of its row.
        #expect(truncate(file, off_t(last.lowerBound + RowLog.headerSize + 20)) == 0)
        let page = try #require(try temporary.store.preparedPageAtOnce(.number(1), size: 10, tag: Self.tag))
        #expect(page.corrupt == [10])
        // Read for other templates, the intact rows are stale, not corrupt (a sweep renders them again).
        let other = try #require(try temporary.store.preparedPageAtOnce(.number(1), size: 10, tag: Self.tag + 1))
        #expect(other.corrupt == [10])
        #expect(other.rows.allSatisfy { $0.prepared.isEmpty && $0.itemIndex != nil })
    }
}
