import FeedFixtures
import FeedImport
import Foundation
import HTTPTestClient
import Testing

@testable import SQLiteStore
@testable import Warmfeed
@testable import WarmfeedCore

@Suite struct ServedImportTests {
    @Test func aHostileFeedRendersNothingThatCouldRun() async throws {
        let file = try ImportedFeeds.file(ImportedFeeds.hostile)
        try await ServedFeed.with(items: 0, configure: { $0.sources = [file] }) { feed in
            guard case .success(let report) = await feed.app.importSources().first else {
                Issue.record("the hostile feed did not import")
                return
            }
            #expect(report.written.inserted == 3)
            let page = try await feed.get("/")
            #expect(page.status == 200)
            let csp = try #require(page.header("Content-Security-Policy"))
            #expect(csp.contains("script-src 'self'"))
            #expect(csp.contains("img-src 'self';"))
            #expect(!csp.contains("unsafe-inline"))
            let html = page.text
            let lower = html.lowercased()
            // The page's own script is the only script element; it is served by us.
            let scripts = lower.components(separatedBy: "<script").count - 1
            #expect(scripts == 1)
            #expect(lower.contains(#"<script src="/static/feed.js"#) || lower.contains("<script defer src=\"/static/feed.js"), "\(html.prefix(600))")
            for forbidden in ["javascript:", "data:", "file:", "<svg", "<iframe", "<style"] {
                #expect(!lower.contains(forbidden), "\(forbidden) reached the page")
            }
            // Every real tag (text can hold no "<": it is escaped) has no event handler, and
            // every URL in it is the server's own (a path, or a place in this document) or http(s).
            for tag in Self.tags(in: html) {
                #expect(tag.firstMatch(of: /[\s"'\/]on[a-zA-Z]+\s*=/) == nil, "an event handler: \(tag)")
                for match in tag.matches(of: /(?:href|src|srcset|action)="([^"]*)"/) {
                    let url = String(match.1)
                    #expect(url.hasPrefix("/") || url.hasPrefix("#") || url.hasPrefix("https://") || url.hasPrefix("http://"), "\(url) in \(tag)")
                }
            }
            // The text is still there, as text.
            #expect(
                html.contains("&lt;script&gt;alert(&#39;title&#39;)&lt;/script&gt;Plain")
                    || html.contains("&lt;script&gt;alert(&#x27;title&#x27;)&lt;/script&gt;Plain") || html.contains("Plain"))
            #expect(html.contains("&lt;b&gt;double-escaped&lt;/b&gt;"))
            // Every outgoing link carries the full rel.
            let anchors = html.components(separatedBy: "<a ").dropFirst()
            for anchor in anchors where anchor.hasPrefix("href=\"http") {
                #expect(anchor.contains(#"rel="noopener noreferrer nofollow ugc""#), "\(anchor.prefix(200))")
            }
            // No item got an image it should not have: the data: and file: images were refused.
            #expect(!html.contains("<img"))
        }
    }

    @Test func theRefreshLoopPollsConditionallyAndNewItemsComeOnTop() async throws {
        let origin = try FaultyOrigin()
        defer { origin.stop() }
        var posts = (1...25).map { (id: "p\($0)", title: "Post \($0)") }
        let newDates = ["new-b": "Wed, 30 Oct 2024 10:00:00 GMT", "new-a": "Tue, 29 Oct 2024 10:00:00 GMT"]
        func serve(_ items: [(id: String, title: String)], etag: String) {
            origin.script(
                "/feed.xml",
                .respond(
                    contentType: "application/rss+xml",
                    body: Array(ImportedFeeds.rss(items, textOnly: Set(0..<items.count), dates: newDates).utf8),
                    headers: ["ETag: \"\(etag)\"", "Last-Modified: Mon, 07 Oct 2024 10:00:00 GMT"]
                ))
        }
        serve(posts, etag: "v1")
        try await ServedFeed.with(
            items: 0, pageSize: 10,
            configure: {
                $0.sources = [origin.url("/feed.xml")]
                $0.refreshInterval = .seconds(1)
            }
        ) { feed in
            guard case .success(let first) = await feed.app.importSources().first else {
                Issue.record("the first import failed")
                return
            }
            #expect(first.written.inserted == 25)
            #expect(first.validators.etag == "\"v1\"")

            // A reader on page 2 (reached through the sentinel's cursor).
            let top = try await feed.get("/")
            let after = try #require(Self.sentinelFragment(in: top.text))
            let pageTwo = try await feed.get(after)
            #expect(pageTwo.status == 200)

            // Unchanged: the loop sends the validators and gets 304.
            origin.script("/feed.xml", .respond(status: 304, contentType: nil, body: []))
            let polled = await origin.eventually(timeout: .seconds(20)) { $0.requests(to: "/feed.xml") >= 3 }
            #expect(polled, "the refresh loop polled")
            let request = origin.lastRequest(to: "/feed.xml") ?? ""
            #expect(request.lowercased().contains("if-none-match: \"v1\""), "\(request)")
            #expect(request.lowercased().contains("if-modified-since: mon, 07 oct 2024 10:00:00 gmt"), "\(request)")

            // Changed: two new posts, newer than all; they appear on top.
            posts.insert(contentsOf: [(id: "new-b", title: "Brand new B"), (id: "new-a", title: "Brand new A")], at: 0)
            serve(posts, etag: "v2")
            let before = origin.requests(to: "/feed.xml")
            _ = await origin.eventually(timeout: .seconds(20)) { $0.requests(to: "/feed.xml") >= before + 1 }
            var topNow = ""
            for _ in 0..<100 {
                topNow = try await feed.get("/").text
                if topNow.contains("Brand new B") { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(topNow.contains("Brand new B"))
            #expect(topNow.range(of: "Brand new B")!.lowerBound < topNow.range(of: "Post 1<")!.lowerBound)
            // The operator sees it all in /admin/cache.
            let source = try #require(try await feed.adminJSON()["source"] as? [String: Any])
            #expect((source["imports"] as? Int ?? 0) >= 3)
            #expect((source["not_modified"] as? Int ?? 0) >= 1)
            #expect(source["refresh_seconds"] as? Double == 1)
            #expect((source["source"] as? String)?.hasSuffix("/feed.xml") == true)
            // The reader's page 2, asked again by the same cursor, shows the same items.
            let pageTwoAgain = try await feed.get(after)
            #expect(Self.titles(in: pageTwoAgain.text) == Self.titles(in: pageTwo.text))
        }
    }

    @Test func aFailedImportKeepsTheServerServingAndAnotherProcessesImportShows() async throws {
        let posts = (1...12).map { (id: "s\($0)", title: "Served \($0)") }
        let file = try ImportedFeeds.file(ImportedFeeds.rss(posts, textOnly: Set(0..<12)))
        try await ServedFeed.with(
            items: 0, pageSize: 10,
            configure: {
                $0.sources = [file]
                $0.refreshInterval = .seconds(1)
            }
        ) { feed in
            guard case .success = await feed.app.importSources().first else {
                Issue.record("the first import failed")
                return
            }
            let before = try await feed.get("/").text
            #expect(before.contains("Served 1<"))
            // The source turns into an HTML page: its next poll fails, nothing changes, pages still come.
            try Data("<html><body>moved</body></html>".utf8).write(to: URL(fileURLWithPath: file))
            var error = ""
            for _ in 0..<200 where error.isEmpty {
                error = (try await feed.adminJSON()["source"] as? [String: Any])?["last_error"] as? String ?? ""
                if error.isEmpty { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(error.contains("HTML"))
            let after = try await feed.get("/")
            #expect(after.status == 200)
            #expect(after.text.contains("Served 1<"))
            #expect(try await feed.app.store.count() == 12)
            let status = try #require(try await feed.adminJSON()["source"] as? [String: Any])
            #expect((status["failures"] as? Int ?? 0) >= 1, "failed polls are counted (a failing source is polled again, backing off)")
            #expect((status["last_error"] as? String)?.contains("HTML") == true)

            // `warmfeed import` in another process writes the same SQLite file: the server notices within a second or so.
            let other = try SQLiteFeedStore(path: feed.dataFolder + "/feed.sqlite")
            try other.upsert([FeedItem(guid: "outside", title: "Imported from outside", summary: "", published: Int64(Date().timeIntervalSince1970 * 1000))])
            var seen = false
            for _ in 0..<100 where !seen {
                seen = try await feed.get("/").text.contains("Imported from outside")
                if !seen { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(seen, "a page rendered before the outside write was served after it")
        }
    }

    @Test func newItemsWithImagesAreWarmedForTheTopPagesBeforeAnyoneAsks() async throws {
        let origin = try FaultyOrigin()
        defer { origin.stop() }
        let jpeg = try await OriginImages.jpeg(seed: 9)
        // Images at absolute URLs on the loopback origin, as a real feed's would be.
        let posts = (1...12).map { (id: "w\($0)", title: "Warm \($0)") }
        for post in posts {
            origin.script("/img/\(post.id).jpg", .respond(contentType: "image/jpeg", body: jpeg))
        }
        let file = try ImportedFeeds.file(ImportedFeeds.rss(posts, base: origin.url("")))
        try await ServedFeed.with(
            items: 0, pageSize: 5,
            configure: {
                $0.sources = [file]
                $0.prewarm.pages = 2
                $0.allowedOrigins = ServedFeed.loopbackOrigins
            }
        ) { feed in
            guard case .success(let report) = await feed.app.importSources().first else {
                Issue.record("the import failed")
                return
            }
            #expect(report.written.inserted == 12)
            // Nobody reads yet: the two top pages are warmed all the same.
            var done = 0
            for _ in 0..<600 where done < 2 {
                done = (try await feed.adminJSON()["prewarm"] as? [String: Any])?["done"] as? Int ?? 0
                if done < 2 { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(done >= 2)
            #expect(posts[..<10].allSatisfy { origin.requests(to: "/img/\($0.id).jpg") == 1 }, "pages 1 and 2 fetched once each")
            let before = try await feed.adminJSON()["hits"] as? Int ?? 0
            let page = try await feed.get("/")
            let ids = page.text.matches(of: /\/thumbs\/(\d+)-[0-9a-f]{8}\/1x"/).compactMap { Int64($0.1) }
            #expect(ids.count == 5)
            for id in ids { #expect(try await feed.thumbnail(id).status == 200) }
            #expect((try await feed.adminJSON()["hits"] as? Int ?? 0) - before == 5, "the first page's thumbnails were warm")
        }
    }

    @Test func aRestartAsksWithTheValidatorsItKept() async throws {
        let origin = try FaultyOrigin()
        defer { origin.stop() }
        let posts = (1...3).map { (id: "r\($0)", title: "Restart \($0)") }
        origin.script(
            "/feed.xml",
            .respond(
                contentType: "application/rss+xml", body: Array(ImportedFeeds.rss(posts).utf8), headers: ["ETag: \"r1\""]))
        let first = try await ServedFeed.start(items: 0, configure: { $0.sources = [origin.url("/feed.xml")] })
        guard case .success(let report) = await first.app.importSources().first else {
            await first.stop()
            Issue.record("the first import failed")
            return
        }
        #expect(report.written.inserted == 3)
        await first.stop(keepingData: true)

        origin.script("/feed.xml", .respond(status: 304, contentType: nil, body: []))
        try await ServedFeed.with(
            items: 0,
            configure: {
                $0.sources = [origin.url("/feed.xml")]
                $0.dataFolder = first.dataFolder
            }
        ) { again in
            guard case .success(let report) = await again.app.importSources().first else {
                Issue.record("the import after the restart failed")
                return
            }
            #expect(report.notModified)
            #expect(origin.lastRequest(to: "/feed.xml")?.lowercased().contains("if-none-match: \"r1\"") == true)
            let count = try await again.app.store.count()
            #expect(count == 3)
        }
    }

    static func tags(in html: String) -> [String] {
        html.matches(of: /<[a-zA-Z][^>]*>/).map { String($0.output) }
    }

    static func sentinelFragment(in html: String) -> String? {
        guard let range = html.range(of: #"data-fragment=""#) else { return nil }
        let rest = html[range.upperBound...]
        return rest.prefix { $0 != "\"" }.replacingOccurrences(of: "&amp;", with: "&")
    }

    static func titles(in html: String) -> [String] {
        html.components(separatedBy: "<h2 ").dropFirst().map { String($0.prefix(while: { $0 != "\n" })) }
    }
}
