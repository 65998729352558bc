import Foundation
import Testing

@testable import WarmfeedCore

@Suite struct FeedWriterTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-writer-\(UUID().uuidString)")

    func makeStore() throws -> SQLiteFeedStore {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return try SQLiteFeedStore(path: folder.appendingPathComponent("feed.sqlite").path)
    }

    func item(_ guid: String, _ published: Int64, title: String = "t") -> FeedItem {
        FeedItem(guid: guid, title: title, summary: "", published: published)
    }

    struct Interrupted: Error {}

    @Test func aWriteThatThrowsLeavesNothingBehind() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try makeStore()
        try store.upsert([item("a", 1), item("b", 2)])
        let revision = store.revision
        #expect(throws: Interrupted.self) {
            try store.write { writer in
                try writer.upsert(item("c", 3))
                try writer.upsert(item("a", 1, title: "changed"))
                throw Interrupted()
            }
        }
        #expect(try store.count() == 2)
        #expect(try store.page(.number(1), size: 10)?.items.map(\.title) == ["t", "t"])
        #expect(store.revision == revision)
    }

    @Test func repeatedGuidsInOneWriteAreCountedOnceAndTheLaterWins() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try makeStore()
        let (_, summary) = try store.write { writer in
            try writer.upsert(item("x", 5, title: "first"))
            try writer.upsert(item("x", 5, title: "second"))
            try writer.upsert(item("y", 6))
        }
        #expect(summary.inserted == 2)
        #expect(summary.repeated == 1)
        #expect(summary.updated == 0)
        #expect(try store.page(.number(1), size: 10)?.items.map(\.title) == ["t", "second"])
    }

    @Test func keepingTheStoredDateLeavesAnUndatedItemInPlace() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try makeStore()
        try store.upsert([item("old", 100), item("mid", 200)])
        let (_, summary) = try store.write { writer in
            // A guessed date (now) must not move an item already stored.
            try writer.upsert(item("old", 999), keepStoredDate: true)
            try writer.upsert(item("new", 999), keepStoredDate: true)
        }
        #expect(summary.unchanged == 1)
        #expect(summary.inserted == 1)
        let page = try #require(try store.page(.number(1), size: 10))
        #expect(page.items.map(\.guid) == ["new", "mid", "old"])
        #expect(page.items.map(\.seq) == [3, 2, 1])
    }
}

@Suite struct OtherWriterTests {
    @Test func aWriteByAnotherConnectionBumpsTheRevision() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-other-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("feed.sqlite").path
        let server = try SQLiteFeedStore(path: path)
        server.noticeOtherWriters()
        let before = server.revision
        server.noticeOtherWriters()
        #expect(server.revision == before, "nothing written: nothing noticed")
        // The importer is another process in real life; another store on the same file is the same to SQLite.
        let importer = try SQLiteFeedStore(path: path)
        try importer.upsert([FeedItem(guid: "x", title: "t", summary: "", published: 1)])
        server.noticeOtherWriters()
        #expect(server.revision == before + 1)
        try importer.upsert([FeedItem(guid: "x", title: "t", summary: "", published: 1)])
        server.noticeOtherWriters()
        #expect(server.revision == before + 1, "an import that changed nothing is not a write")
    }
}
