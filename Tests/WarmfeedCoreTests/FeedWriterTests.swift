import Foundation
import Testing

@testable import WarmfeedCore

@Suite struct OtherWriterTests {
    @Test func aWriteByAnotherConnectionBumpsTheRevision() async throws {
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
