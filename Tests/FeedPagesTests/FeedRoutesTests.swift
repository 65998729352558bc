import Foundation
import HTTPServer
import HTTPServerTesting
import Logging
import SQLiteStore
import Testing

@testable import FeedPages
@testable import WarmfeedCore

/// `/` and `/fragment` through the router in this process, with no socket
/// (`InProcessClient`): a real SQLite store, the real templates, the page
/// service and its cache, as the server builds them; pre-warm not there.
@Suite struct FeedRoutesTests {
    static let templates = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Templates").path
    static let pageSize = 10

    /// The routes over a fresh store of `items` demo items, in a folder removed afterwards.
    static func with(items: Int, _ body: (InProcessClient, SQLiteFeedStore) async throws -> Void) async throws {
        try await with(items: items) { client, store, _ in try await body(client, store) }
    }

    /// The same, with the page service the routes read (pre-warm's door to pages).
    static func with(items: Int, _ body: (InProcessClient, SQLiteFeedStore, PageService) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-routes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteFeedStore(path: folder.appendingPathComponent("feed.sqlite").path)
        try store.upsert(DemoFeed.items(count: items))
        let renderer = try PageRenderer(
            templatesFolder: templates, scriptURL: "/static/feed.js", styleURL: "/static/feed.css", threshold: 0.7, epoch: store.epoch)
        let pages = PageService(store: store, renderer: renderer, cache: PageCache(capacityBytes: 1 << 20), pageSize: pageSize)
        let routes = FeedRoutes(pages: pages, prewarmer: nil, logger: Logger(label: "test"))
        var router = Router()
        routes.add(to: &router)
        router.problems = { problem, request, headers in routes.answer(problem, to: request, headers: headers) }
        try await body(InProcessClient(router), store, pages)
    }

    /// The ids of the rows a page's HTML holds, in order.
    static func rowIDs(_ html: String) -> [Int64] {
        html.components(separatedBy: "<article class=\"row").dropFirst().compactMap { row in
            row.range(of: "id=\"i").flatMap { start in Int64(row[start.upperBound...].prefix { $0.isNumber }) }
        }
    }

    @Test func pagesComeInOrderAndEachCursorLeadsOn() async throws {
        try await Self.with(items: 25) { client, _ in
            let first = await client.get("/fragment")
            #expect(first.status == 200)
            #expect(first.header("Content-Type")?.hasPrefix("text/html") == true)
            #expect(Self.rowIDs(first.text) == Array((16...25).reversed()))
            // The sentinel's link is the next page's: follow it to the end.
            var seen = Self.rowIDs(first.text)
            var next = RenderedLink.next(in: first.text)
            while let target = next {
                let page = await client.get(target)
                #expect(page.status == 200, "\(target)")
                seen += Self.rowIDs(page.text)
                next = RenderedLink.next(in: page.text)
            }
            #expect(seen == Array((1...25).reversed()), "every item once, newest first")
            let document = await client.get("/?page=2")
            #expect(document.status == 200 && document.text.lowercased().hasPrefix("<!doctype html"))
            #expect(Self.rowIDs(document.text) == Array((6...15).reversed()))
        }
    }

    @Test func aClientWhoseCopyIsCurrentGets304AndAGzipClientTheSamePageGzipped() async throws {
        try await Self.with(items: 25) { client, _ in
            let plain = await client.get("/fragment?page=2")
            let etag = try #require(plain.header("ETag"))
            let again = await client.get("/fragment?page=2", headers: [("If-None-Match", etag)])
            #expect(again.status == 304 && again.body.isEmpty && again.header("ETag") == etag)
            let gzipped = await client.get("/fragment?page=2", headers: [("Accept-Encoding", "gzip, br")])
            #expect(gzipped.status == 200 && gzipped.header("Content-Encoding") == "gzip" && gzipped.header("ETag") == etag)
            #expect(gzipped.body.prefix(2) == [0x1F, 0x8B] && gzipped.body.count < plain.body.count)
        }
    }

    @Test func aDocumentIssuesTheReadersCookieAndAFragmentDoesNot() async throws {
        try await Self.with(items: 5) { client, _ in
            let document = await client.get("/", headers: [("Sec-Fetch-Mode", "navigate")])
            #expect(document.header("Set-Cookie")?.hasPrefix("wf=") == true)
            #expect(await client.get("/fragment").header("Set-Cookie") == nil)
            // A reader who came back keeps the id; a cookie not of ours is replaced.
            let returning = await client.get("/", headers: [("Cookie", "wf=0123456789abcdef")])
            #expect(returning.status == 200 && returning.header("Set-Cookie") == nil)
            let forged = await client.get("/", headers: [("Cookie", "wf=<script>")])
            #expect(forged.header("Set-Cookie")?.hasPrefix("wf=") == true)
        }
    }

    @Test func aPagePrewarmWarmedIsKeptAsTheBytesAReaderIsGiven() async throws {
        try await Self.with(items: 45) { client, store, pages in
            // Rows rendered ahead, as a serving node has them: pre-warm and readers read them.
            let renderer = try #require(pages.renderer.rowTag.map { _ in pages.renderer })
            try await RowPreparation(store: store, renderer: renderer, pageSize: Self.pageSize, repairs: pages.repairs, logger: Logger(label: "test"))
                .catchUp()
            let query = PageQuery(request: .number(3), number: 3)
            let warmed = try #require(await pages.pageForWarming(query))
            #expect(warmed.number == 3 && warmed.page.items.map(\.id) == Array((16...25).reversed()), "the items, for their thumbnails")
            let key = PageCache.Key(revision: store.revision, kind: .fragment, query: query)
            let kept = try #require(pages.kept(key), "pre-warm's rendering is kept")
            let served = await client.get("/fragment?page=3")
            #expect(served.status == 200 && served.body == kept.html.bytes, "a reader is given the bytes pre-warm kept")
            // And they are the bytes a reader's own render makes, from a cache without them.
            let fresh = PageService(store: store, renderer: renderer, cache: PageCache(capacityBytes: 1 << 20), pageSize: Self.pageSize)
            #expect(try await fresh.render(key)?.html.bytes == kept.html.bytes)
        }
    }

    @Test func badInputGetsOneClear4xxAndLosesNothing() async throws {
        try await Self.with(items: 25) { client, store in
            let other = Cursor(epoch: store.epoch &+ 1, published: 5, id: 9).token
            let cases: [(String, Int)] = [
                ("/fragment?page=abc", 400), ("/fragment?page=0", 400), ("/fragment?page=1&page=2", 400),
                ("/fragment?after=garbage", 400), ("/fragment?page=2&after=\(other)", 410), ("/fragment?page=99", 404),
                ("/?page=99", 404), ("/no-such-route", 404),
            ]
            for (target, status) in cases {
                let answered = await client.get(target)
                #expect(answered.status == status, "\(target): \(answered.status) \(answered.text.prefix(120))")
            }
            // A browser that navigates to a wrong address gets the feed's own error page.
            let navigated = await client.get("/no-such-route", headers: [("Accept", "text/html")])
            #expect(navigated.status == 404 && navigated.header("Content-Type")?.hasPrefix("text/html") == true)
            let posted = await client.send(.post, "/fragment")
            #expect(posted.status == 405 && posted.header("Allow") == "GET, HEAD")
            // Nothing lost: the feed reads as before.
            #expect(Self.rowIDs(await client.get("/fragment").text) == Array((16...25).reversed()))
        }
    }
}

/// The next page's fragment URL a page's sentinel names.
enum RenderedLink {
    static func next(in html: String) -> String? {
        guard let sentinel = html.range(of: "class=\"sentinel") else { return nil }
        let rest = html[sentinel.upperBound...]
        guard let attribute = rest.range(of: "data-fragment=\""), let end = rest[attribute.upperBound...].firstIndex(of: "\"") else { return nil }
        return String(rest[attribute.upperBound..<end]).replacingOccurrences(of: "&amp;", with: "&")
    }
}
