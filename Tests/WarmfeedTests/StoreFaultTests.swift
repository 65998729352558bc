import FeedImport
import Foundation
import HTTPTestClient
import Logging
import PostgresStore
import Testing

@testable import FeedIngest
@testable import Warmfeed
@testable import WarmfeedCore

/// A PostgreSQL of this test's own (it is stopped and started again under
/// the server), from `scripts/postgres`, as the test command starts one.
struct OwnPostgres {
    let folder: String
    let url: String

    static var available: Bool { ProcessInfo.processInfo.environment["WARMFEED_TEST_POSTGRES"].map { $0 != "skip" } ?? false }

    static func start() throws -> OwnPostgres {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-pg-\(UUID().uuidString.prefix(8))").path
        let url = try script("start", folder).trimmingCharacters(in: .whitespacesAndNewlines)
        return OwnPostgres(folder: folder, url: url)
    }

    func stop() throws { _ = try Self.script("stop", folder) }
    func restart() throws { _ = try Self.script("restart", folder) }

    func remove() {
        _ = try? Self.script("stop", folder)
        try? FileManager.default.removeItem(atPath: folder)
    }

    @discardableResult
    private static func script(_ command: String, _ folder: String) throws -> String {
        // Into a file, not a pipe: the server pg_ctl starts inherits the
        // descriptor, and a pipe would never reach its end while it runs.
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-pg-out-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        // posix_spawn and waitpid: Foundation's Process waits for its child on a
        // run loop, which never turned here.
        let script = ServedFeed.repository.appendingPathComponent("scripts/postgres").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, output.path, O_WRONLY | O_TRUNC, 0o644)
        // The PostgreSQL it starts outlives the script: it holds none of this process's sockets.
        closeInheritedDescriptors(&actions)
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup(script), strdup(command), strdup(folder), nil]
        defer { for argument in arguments { free(argument) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, script, &actions, nil, arguments, environ) == 0 else {
            throw StoreUnavailable("cannot run scripts/postgres")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        guard status == 0 else { throw StoreUnavailable("scripts/postgres \(command) failed (\(status))") }
        return try String(contentsOf: output, encoding: .utf8)
    }
}

/// PostgreSQL stopped under a serving node: what is cached keeps being
/// served, the rest gets a quick 503 with Retry-After (never a hang or a
/// crash), the admin view says so, an import writes nothing, and serving
/// resumes by itself when PostgreSQL is back.
@Suite(.serialized, .enabled(if: OwnPostgres.available)) struct StoreFaultTests {
    @Test func postgresStoppedWhileServingThenBack() async throws {
        let postgres = try OwnPostgres.start()
        defer { postgres.remove() }
        let feed = try await ServedFeed.start(items: 300, pageSize: 10) { configuration in
            configuration.store = postgres.url
            configuration.prewarm.pages = 0
        }
        do {
            let warm = try await feed.get("/?page=1")
            #expect(warm.status == 200)
            let cachedFragment = try await feed.get("/fragment?page=2")
            #expect(cachedFragment.status == 200)
            let token = ["Authorization": "Bearer test-admin-token-of-32-characters"].map { ($0.key, $0.value) }
            #expect(try await feed.get("/admin/cache", headers: token).text.contains("\"answering\" : true"))

            try postgres.stop()
            // The cached page and fragment are still served.
            #expect(try await feed.get("/?page=1").status == 200)
            #expect(try await feed.get("/fragment?page=2").status == 200)
            // The admin view says the store is down (the listener notices its connection closed).
            // Until then a page never rendered may come from the node's copy (no
            // write can land meanwhile), or get the 503 below.
            var down = false
            for _ in 0..<50 where !down {
                down = try await feed.get("/admin/cache", headers: token).text.contains("\"answering\" : false")
                if !down { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(down, "the admin view never said the store is down")
            // A page never rendered: a quick 503 that says when to come back.
            let cold = try await feed.get("/fragment?page=9")
            #expect(cold.status == 503)
            #expect(cold.header("Retry-After") != nil)
            let coldDocument = try await feed.get("/?page=12")
            #expect(coldDocument.status == 503)
            #expect(coldDocument.text.contains("not answering"))
            #expect(try await feed.get("/admin", headers: token).text.contains("DOWN"))
            #expect(try await feed.get("/metrics", headers: token).text.contains("warmfeed_store_up 0"))
            // A thumbnail whose item cannot be read gets the placeholder, not a 5xx.
            let thumbnail = try await feed.thumbnail(3)
            #expect(thumbnail.status == 200)

            // An import now writes nothing, and says so.
            let source = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-down-\(UUID().uuidString).json")
            try Data(
                #"{"version":"https://jsonfeed.org/version/1.1","title":"t","items":[{"id":"new","title":"New","date_published":"2030-01-01T00:00:00Z"}]}"#.utf8
            ).write(to: source)
            defer { try? FileManager.default.removeItem(at: source) }
            let importer = Importer(store: feed.app.store, fetcher: feed.app.fetcher, workFolder: URL(fileURLWithPath: feed.dataFolder))
            do throws(ImportError) {
                _ = try await importer.run(.file(source.path))
                Issue.record("an import with the store down succeeded")
            } catch {
                #expect(error.description.contains("nothing was written"), "\(error)")
            }

            // Back: cold pages are served again without a restart of the node.
            try postgres.restart()
            var back = false
            for _ in 0..<100 where !back {
                back = try await feed.get("/fragment?page=9").status == 200
                if !back { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(back, "serving did not resume after PostgreSQL came back")
            #expect(try await feed.get("/admin/cache", headers: token).text.contains("\"answering\" : true"))
            #expect(try await feed.app.store.count() == 300, "nothing was lost, nothing was added")
        } catch {
            await feed.stop()
            throw error
        }
        await feed.stop()
    }

    /// A node's own copy of the feed (issue 35): cold pages are read from it
    /// once it has caught up; after PostgreSQL restarts, a write another node
    /// makes is on this node's first page within seconds, and its copy catches
    /// up with it and serves cold pages again.
    @Test func aNodesCopyServesColdPagesAndFollowsAWriteAfterARestart() async throws {
        let postgres = try OwnPostgres.start()
        defer { postgres.remove() }
        let feed = try await ServedFeed.start(items: 300, pageSize: 10) { configuration in
            configuration.store = postgres.url
            configuration.prewarm.pages = 0
        }
        do {
            func store() async throws -> [String: Any] { try #require(try await feed.adminJSON()["store"] as? [String: Any]) }
            func copy() async throws -> [String: Any] { try #require(try await store()["copy"] as? [String: Any]) }
            // Every row prepared and copied: cold pages come from the copy.
            var page = 1
            var fromCopy = 0
            for _ in 0..<300 where fromCopy == 0 {
                #expect(try await feed.get("/fragment?page=\(page)").status == 200)
                page = page % 30 + 1
                fromCopy = try await copy()["pages_from_copy"] as? Int ?? 0
                if fromCopy == 0 { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(fromCopy > 0, "no cold page came from the node's copy")

            try postgres.stop()
            try postgres.restart()
            let other = try await PostgresFeedStore.open(try PostgresLocation(postgres.url), logger: Logger(label: "warmfeed.test"))
            _ = try other.write { writer in
                try writer.upsert(FeedItem(guid: "after-restart", title: "Written after the restart", summary: "", published: 4_000_000_000_000))
            }
            await other.close()
            var seen = false
            for _ in 0..<200 where !seen {
                seen = try await feed.get("/fragment?page=1").text.contains("Written after the restart")
                if !seen { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(seen, "the write made after the restart never reached this node's first page")
            var caughtUp = false
            for _ in 0..<200 where !caughtUp {
                caughtUp = try await copy()["writes"] as? Int == store()["revision"] as? Int
                if !caughtUp { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(caughtUp, "the node's copy never caught up with the write")
            let before = try await copy()["pages_from_copy"] as? Int ?? 0
            var after = before
            for number in 2...31 where after == before {
                #expect(try await feed.get("/fragment?page=\(number)").status == 200)
                after = try await copy()["pages_from_copy"] as? Int ?? 0
            }
            #expect(after > before, "no cold page came from the copy after the restart")
            #expect(try await copy()["problem"] == nil)
        } catch {
            await feed.stop()
            throw error
        }
        await feed.stop()
    }

    /// A thumbnail on disk needs no item: it is served while the store is
    /// down (the item is read only to make one), and one never made still
    /// gets the placeholder, not a 5xx.
    @Test func aThumbnailOnDiskIsServedWhileTheStoreIsDown() async throws {
        let postgres = try OwnPostgres.start()
        defer { postgres.remove() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-down-disk-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let configure: (inout WarmfeedConfiguration) -> Void = { configuration in
            configuration.store = postgres.url
            configuration.prewarm.pages = 0
        }
        let first = try await ServedFeed.start(items: 50, dataFolder: folder, configure: configure)
        // As a reader asks: by the picture its page names, which needs no store read to find.
        let pictures = try await first.thumbnailPaths(on: "/?page=5")
        let (three, four) = (try #require(pictures.first { $0.hasPrefix("/thumbs/3-") }), try #require(pictures.first { $0.hasPrefix("/thumbs/4-") }))
        let made = try await first.get(three, headers: [("Accept", "image/webp,*/*")])
        #expect(made.header("Content-Type") == "image/webp")
        // The disk tier is written after the answer: wait for the file.
        var written = false
        for _ in 0..<100 where !written {
            written = ServedFeed.diskFile(in: folder, "thumbs", item: 3, suffix: "-1x.webp") != nil
            if !written { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(written, "the thumbnail never reached the disk tier")
        await first.stop(keepingData: true)

        // A new process: nothing in memory, the thumbnail on disk, and PostgreSQL gone.
        let restarted = try await ServedFeed.start(items: 50, dataFolder: folder, configure: configure)
        do {
            try postgres.stop()
            let fromDisk = try await restarted.get(three, headers: [("Accept", "image/webp,*/*")])
            #expect(fromDisk.status == 200)
            #expect(fromDisk.header("X-Warmfeed-Placeholder") == nil)
            #expect(fromDisk.body == made.body)
            let neverMade = try await restarted.get(four, headers: [("Accept", "image/webp,*/*")])
            #expect(neverMade.status == 200)
            #expect(neverMade.header("X-Warmfeed-Placeholder") == "1")
            #expect(try await restarted.adminJSON()["disk_hits"] as? Int == 1)
        } catch {
            await restarted.stop(keepingData: true)
            throw error
        }
        await restarted.stop(keepingData: true)
    }

    @Test func twoNodesOnOneDatabaseServeOneFeed() async throws {
        let postgres = try OwnPostgres.start()
        defer { postgres.remove() }
        let first = try await ServedFeed.start(items: 200, pageSize: 10) {
            $0.store = postgres.url; $0.prewarm.pages = 0
        }
        let second = try await ServedFeed.start(items: 200, pageSize: 10) {
            $0.store = postgres.url; $0.prewarm.pages = 0
        }
        do {
            // The second node found the feed the first seeded: one feed, one epoch, the same cursors.
            #expect(try await second.app.store.count() == 200)
            #expect(first.app.store.epoch == second.app.store.epoch)
            let page = try await first.get("/fragment?page=3").text
            let attribute = try #require(page.range(of: #"data-fragment="[^"]+""#, options: .regularExpression).map { String(page[$0]) })
            let next = String(attribute.dropFirst("data-fragment=\"".count).dropLast()).replacingOccurrences(of: "&amp;", with: "&")
            #expect(next.contains("after="))
            let onFirst = try await first.get(next)
            let onSecond = try await second.get(next)
            #expect(onFirst.status == 200 && onSecond.status == 200)
            #expect(onFirst.text == onSecond.text, "the page after page 3 is the same on either node")

            // A write on the first node reaches the second's pages without a restart or a poll per request.
            let top = try await second.get("/fragment?page=1").text
            #expect(!top.contains("Written on the first node"))
            let item = FeedItem(guid: "fresh", title: "Written on the first node", summary: "", published: DemoFeed.newest + 60_000)
            _ = try await first.app.store.writeOffPool { writer in try writer.upsert(item) }
            var seen = false
            for _ in 0..<100 where !seen {
                seen = try await second.get("/fragment?page=1").text.contains("Written on the first node")
                if !seen { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(seen, "the second node kept serving its stale page 1")
        } catch {
            await first.stop()
            await second.stop()
            throw error
        }
        await first.stop()
        await second.stop()
    }
}
