import Foundation
import Testing

@testable import SQLiteStore
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

/// The server's once-a-second look for other writers runs in a task, beside
/// readers' async item reads. It once read through GRDB's pool synchronously:
/// with every reader held by an async read waiting for a cooperative thread,
/// and every cooperative thread (two, on two cores) blocked in that look
/// waiting for a reader, the process froze. Here many of both run at once; a
/// plain thread, which needs no cooperative thread, ends the process with a
/// message if they have not finished long after they should have.
@Suite struct NoticingWhileReadingTests {
    @Test func lookingForOtherWritersNeverWaitsOnTheReadersItemReadsHold() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-notice-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteFeedStore(path: folder.appendingPathComponent("feed.sqlite").path)
        try store.upsert((1...50).map { FeedItem(guid: "g\($0)", title: "t\($0)", summary: "", published: Int64($0)) })

        let finished = DispatchSemaphore(value: 0)
        let watchdog = Thread {
            // Ten minutes: a deadlock never ends, while a full run on two cores can starve every
            // async test for two (a 120 s watchdog ended such runs with every other result lost).
            if finished.wait(timeout: .now() + 600) == .timedOut {
                fatalError("item reads and noticeOtherWriters() deadlocked: every cooperative thread waits on GRDB's readers")
            }
        }
        watchdog.start()
        let found = try await withThrowingTaskGroup(of: Int.self) { group in
            for round in 0..<400 {
                if round % 2 == 0 {
                    group.addTask { try await store.item(id: Int64(round % 50 + 1)) == nil ? 0 : 1 }
                } else {
                    group.addTask {
                        store.noticeOtherWriters()
                        return 0
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        finished.signal()
        #expect(found == 200)
    }
}
