import FeedFixtures
import FeedImport
import Foundation
import HTTPTestClient
import OriginFetcher
import Testing

@testable import FeedIngest
@testable import Warmfeed
@testable import WarmfeedCore

/// A feed names the addresses its images are fetched from; the operator says
/// which of them the server may reach (issue 34). Canaries are real origins on
/// loopback addresses that count every connection: under the default
/// configuration none is reached, whatever the spelling, and each item gets the
/// placeholder, remembered and counted, while the demo feed goes on as before.
@Suite struct OriginPolicyTests {
    /// Canaries on 127.0.0.1, 127.0.0.2 and ::1, each with a real picture at `/c.jpg`,
    /// and a redirector on 127.0.0.3.
    struct Canaries {
        let one: FaultyOrigin
        let two: FaultyOrigin
        let six: FaultyOrigin
        let redirector: FaultyOrigin

        init(jpeg: [UInt8]) throws {
            one = try FaultyOrigin(host: "127.0.0.1")
            two = try FaultyOrigin(host: "127.0.0.2")
            six = try FaultyOrigin(host: "::1")
            redirector = try FaultyOrigin(host: "127.0.0.3")
            for canary in [one, two, six] { canary.script("/c.jpg", .respond(contentType: "image/jpeg", body: jpeg)) }
            redirector.script("/ok.jpg", .respond(contentType: "image/jpeg", body: jpeg))
            redirector.script("/to-two", .redirect(to: two.url("/c.jpg")))
            redirector.script("/to-six", .redirect(to: six.url("/c.jpg")))
            redirector.script("/to-localhost", .redirect(to: "http://localhost:\(one.port)/c.jpg"))
            redirector.script("/to-decimal", .redirect(to: "http://2130706433:\(one.port)/c.jpg"))
        }

        /// The loopback canaries by every spelling a feed can write, and the redirector's redirects.
        var spellings: [String] {
            [
                one.url("/c.jpg"), two.url("/c.jpg"), "http://2130706433:\(one.port)/c.jpg", "http://0x7f000001:\(one.port)/c.jpg",
                "http://127.1:\(one.port)/c.jpg", "http://0.0.0.0:\(one.port)/c.jpg", six.url("/c.jpg"),
                "http://[::ffff:127.0.0.1]:\(one.port)/c.jpg", "http://localhost:\(one.port)/c.jpg",
            ]
        }

        var redirects: [String] { ["/to-two", "/to-six", "/to-localhost", "/to-decimal"].map(redirector.url) }

        /// Connections the canaries (not the redirector) accepted.
        var connections: Int { [one, two, six].reduce(0) { $0 + $1.connectionsAccepted } }

        func stop() async throws {
            for origin in [one, two, six, redirector] { try await onThread { origin.stop() } }
        }
    }

    /// An RSS feed with one item per URL, its image at that URL.
    static func feed(_ urls: [String]) throws -> String {
        var xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/">
            <channel><title>Canaries</title><link>https://feed.example/</link><description>d</description>

            """
        for (index, url) in urls.enumerated() {
            xml += "<item><guid>canary-\(index)</guid><title>Canary \(index)</title><link>https://feed.example/\(index)</link>"
            xml += "<pubDate>Mon, 07 Oct 2024 10:\(String(format: "%02d", 59 - index)):00 GMT</pubDate>"
            xml += "<media:content url=\"\(url)\" medium=\"image\" width=\"1600\" height=\"1200\"/></item>\n"
        }
        return try ImportedFeeds.file(xml + "</channel></rss>\n")
    }

    /// Imports the feed of `urls` into the served store, as `warmfeed import` does beside a
    /// running server; answers the imported items' ids, in the feed's order.
    static func importFeed(_ urls: [String], into feed: ServedFeed) async throws -> [Int64] {
        let fetcher = OriginFetcher()
        defer { fetcher.shutdown() }
        let importer = Importer(store: feed.app.store, fetcher: fetcher, workFolder: URL(fileURLWithPath: feed.dataFolder))
        let report = try await importer.run(.file(try Self.feed(urls)))
        #expect(report.written.inserted == urls.count, "every URL kept: \(report.summaryLines)")
        var ids: [Int64] = []
        for index in urls.indices {
            let page = try #require(try await feed.app.store.page(.number(1), size: 1000))
            ids.append(try #require(page.items.first { $0.guid == "canary-\(index)" }?.id))
        }
        return ids
    }

    static func refused(_ feed: ServedFeed) async throws -> Int {
        (try await feed.adminJSON()["origin"] as? [String: Any])?["refused"] as? Int ?? -1
    }

    @Test func aFeedPointingAtLoopbackByEverySpellingReachesNothingAndTheDemoGoesOn() async throws {
        let jpeg = try await OriginImages.jpeg(seed: 34)
        let canaries = try Canaries(jpeg: jpeg)
        // The default configuration, but for failures remembered for the whole test (a slow
        // machine must not see one forgotten and tried again).
        try await ServedFeed.with(
            items: 10,
            configure: {
                $0.thumbnails.firstNegativeTTL = .seconds(600)
                $0.thumbnails.negativeTTL = .seconds(600)
            }
        ) { feed in
            let urls = canaries.spellings + canaries.redirects
            let ids = try await Self.importFeed(urls, into: feed)
            for (id, url) in zip(ids, urls) {
                for variant in ["1x", "2x"] {
                    let response = try await feed.thumbnail(id, variant)
                    #expect(isPlaceholder(response), "\(url) \(variant): \(response.status) \(response.header("Content-Type") ?? "")")
                }
            }
            #expect(canaries.connections == 0, "a canary was reached")
            #expect(canaries.redirector.connectionsAccepted == 0, "the redirector is on loopback too")
            let refused = try await Self.refused(feed)
            // Once for each item, or once for each size asked before the other's failure was known
            // (failures are remembered per thumbnail, as for any origin).
            #expect((urls.count...2 * urls.count).contains(refused), "\(refused) refusals for \(urls.count) items")
            // Remembered like any origin failure: asked again, nothing is fetched or refused anew.
            for id in ids { #expect(isPlaceholder(try await feed.thumbnail(id))) }
            #expect(try await Self.refused(feed) == refused)
            let origin = try #require(try await feed.adminJSON()["origin"] as? [String: Any])
            #expect((origin["errors"] as? Int ?? 0) >= refused)
            let metrics = try await feed.get("/metrics", headers: [("Authorization", "Bearer test-admin-token-of-32-characters")]).text
            #expect(metrics.contains("warmfeed_origin_refused \(refused)"), "\(metrics.split(separator: "\n").filter { $0.contains("refused") })")
            // The demo origin is the server's own: its pictures are made as before.
            for id in Int64(1)...3 {
                let demo = try await feed.thumbnail(id)
                #expect(!isPlaceholder(demo) && demo.header("Content-Type") == "image/webp", "demo item \(id)")
            }
            #expect(canaries.connections == 0)
        }
        try await canaries.stop()
    }

    @Test func anAllowedHostsRedirectToLoopbackElsewhereIsRefused() async throws {
        let jpeg = try await OriginImages.jpeg(seed: 35)
        let canaries = try Canaries(jpeg: jpeg)
        try await ServedFeed.with(items: 0, configure: { $0.allowedOrigins = ["127.0.0.3"] }) { feed in
            let urls = [canaries.redirector.url("/ok.jpg")] + canaries.redirects + canaries.spellings
            let ids = try await Self.importFeed(urls, into: feed)
            let allowed = try await feed.thumbnail(ids[0])
            #expect(!isPlaceholder(allowed) && allowed.header("Content-Type") == "image/webp", "the allowed host's own picture")
            for (id, url) in zip(ids, urls).dropFirst() {
                #expect(isPlaceholder(try await feed.thumbnail(id)), "\(url)")
            }
            #expect(canaries.connections == 0, "a redirect from the allowed host reached a canary")
            for path in ["/ok.jpg", "/to-two", "/to-six", "/to-localhost", "/to-decimal"] {
                #expect(canaries.redirector.requests(to: path) == 1, "\(path)")
            }
            #expect((urls.count - 1...2 * (urls.count - 1)).contains(try await Self.refused(feed)))
        }
        try await canaries.stop()
    }

    @Test func aFolderShowsItsOwnFilesAndNothingALinkOrAnotherRowPointsAtOutside() async throws {
        let jpeg = try await OriginImages.jpeg(seed: 36)
        let base =
            try #require(ImportedFolders.resolved(FileManager.default.temporaryDirectory.path))
            + "/warmfeed-folders-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: base) }
        for folder in ["pictures", "outside", "later"] {
            try FileManager.default.createDirectory(atPath: base + "/" + folder, withIntermediateDirectories: true)
        }
        try Data(jpeg).write(to: URL(fileURLWithPath: base + "/pictures/own.jpg"))
        try Data(jpeg).write(to: URL(fileURLWithPath: base + "/outside/secret.jpg"))
        try Data(jpeg).write(to: URL(fileURLWithPath: base + "/later/new.jpg"))
        try FileManager.default.createSymbolicLink(atPath: base + "/pictures/link.jpg", withDestinationPath: base + "/outside/secret.jpg")
        try FileManager.default.createSymbolicLink(atPath: base + "/pictures/inside.jpg", withDestinationPath: "own.jpg")

        // `warmfeed import FOLDER` into a data folder, then `warmfeed serve` on it with no --source.
        let data = ImportedFeeds.dataFolder()
        let importer = try await Importer.standalone(store: nil, dataFolder: data)
        let report = try await importer.run(.folder(base + "/pictures"))
        #expect(report.written.inserted == 1, "own.jpg (reached twice) is the folder's one picture")
        #expect(report.skipped.contains { $0.reason == "symlink out of the folder at \(base)/pictures/link.jpg, not followed" }, "\(report.skipped)")
        // Rows a folder import no longer makes (an older version's, or written by hand): the file
        // outside, and a link inside the folder.
        _ = try importer.store.upsert([
            FeedItem(
                guid: "outside", title: "Outside", summary: "", imageURL: URL(fileURLWithPath: base + "/outside/secret.jpg").absoluteString,
                imageWidth: 1600, imageHeight: 1200, published: 1),
            FeedItem(
                guid: "link", title: "Link", summary: "", imageURL: URL(fileURLWithPath: base + "/pictures/inside.jpg").absoluteString,
                imageWidth: 1600, imageHeight: 1200, published: 2),
        ])
        await importer.store.close()

        // Failures remembered for the whole test, and no pre-warm: a loaded machine must
        // not see a refusal forgotten and asked again, nor sizes no reader asked for.
        let feed = try await ServedFeed.start(items: 0, dataFolder: data) { configuration in
            configuration.prewarm.pages = 0
            configuration.thumbnails.firstNegativeTTL = .seconds(600)
            configuration.thumbnails.negativeTTL = .seconds(600)
        }
        do {
            let page = try #require(try await feed.app.store.page(.number(1), size: 100))
            func id(_ guid: String) throws -> Int64 { try #require(page.items.first { $0.guid == guid }?.id) }
            let own = try await feed.thumbnail(try id(URL(fileURLWithPath: base + "/pictures/own.jpg").absoluteString))
            #expect(!isPlaceholder(own) && own.header("Content-Type") == "image/webp", "the folder's own picture")
            #expect(isPlaceholder(try await feed.thumbnail(try id("outside"))))
            #expect(isPlaceholder(try await feed.thumbnail(try id("link"))))
            #expect((2...4).contains(try await Self.refused(feed)), "the two rows outside, in one or two sizes")

            // A folder imported while the server runs is read from the store when its first file is asked for.
            let fetcher = OriginFetcher()
            defer { fetcher.shutdown() }
            let running = Importer(store: feed.app.store, fetcher: fetcher, workFolder: URL(fileURLWithPath: data))
            #expect(try await running.run(.folder(base + "/later")).written.inserted == 1)
            let later = try #require(try await feed.app.store.page(.number(1), size: 100)?.items.first { $0.title == "new" }?.id)
            let fresh = try await feed.thumbnail(later)
            #expect(!isPlaceholder(fresh) && fresh.header("Content-Type") == "image/webp", "a folder imported since the start")
            await feed.stop()
        } catch {
            await feed.stop()
            throw error
        }
    }
}
