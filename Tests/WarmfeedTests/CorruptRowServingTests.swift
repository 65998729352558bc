import Foundation
import HTTPTestClient
import PageFiles
import Testing

@testable import FeedPages
@testable import SQLiteStore
@testable import Warmfeed
@testable import WarmfeedCore

/// A row rendered ahead whose bytes went bad in the row file (issue 34): the
/// page that holds it is served, 200, with the right item, never a 5xx; the
/// row is prepared again, and `/admin/cache` counts it.
@Suite struct CorruptRowServingTests {
    /// `rows` of `/admin/cache`, once `done` says it is what the test waits for (a hang guard of a minute, no timing).
    static func rows(_ feed: ServedFeed, until done: ([String: Any]) -> Bool) async throws -> [String: Any] {
        for _ in 0..<600 {
            if let rows = try await feed.adminJSON()["rows"] as? [String: Any], done(rows) { return rows }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("rows never got there: \(try await feed.adminJSON()["rows"] ?? "none")")
        return [:]
    }

    @Test func aPageWithACorruptRowIsServedWithTheRightItemAndTheRowIsPreparedAgain() async throws {
        try await ServedFeed.with(items: 40, pageSize: 5) { feed in
            _ = try await Self.rows(feed) { ($0["prepared"] as? Int ?? 0) >= 40 && $0["caught_up"] as? Bool == true }
            // Item 13 is on page 6 (ids 15…11), which nothing has rendered yet.
            let file = feed.dataFolder + "/feed.sqlite-rows"
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
            let record = try #require(CorruptRowsTestsRecord.record(of: 13, in: bytes))
            bytes[record.upperBound - 10] ^= 0x04
            try Data(bytes).write(to: URL(fileURLWithPath: file))

            let title = try #require(try await feed.app.store.item(id: 13)?.title)
            let page = try await feed.get("/?page=6", headers: [("Accept", "text/html")])
            #expect(page.status == 200)
            #expect(page.text.contains(title.replacingOccurrences(of: "&", with: "&amp;")), "item 13's row is its own")
            let fragment = try await feed.get("/fragment?page=6")
            #expect(fragment.status == 200)

            let rows = try await Self.rows(feed) { ($0["repaired"] as? Int ?? 0) >= 1 && $0["caught_up"] as? Bool == true }
            #expect(rows["repaired"] as? Int == 1)
            let store = try #require(feed.app.store as? SQLiteFeedStore)
            let tag = try #require(feed.app.pages.renderer.rowTag)
            let again = try #require(try store.preparedPageAtOnce(.number(6), size: 5, tag: tag))
            #expect(again.corrupt.isEmpty)
            #expect(again.rows.first { $0.id == 13 }.map { !$0.prepared.isEmpty } == true, "row 13 is prepared again")
        }
    }
}

/// Where an item's latest record sits in a SQLite row file (records back to back: id, length, flags, row).
enum CorruptRowsTestsRecord {
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
}
