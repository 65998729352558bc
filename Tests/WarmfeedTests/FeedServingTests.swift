import Foundation
import HTTPTestClient
import Testing

@testable import FeedPages
@testable import Warmfeed
@testable import WarmfeedCore

@Suite struct FeedServingTests {
    @Test func theDocumentIsAWholeAccessiblePageWithASentinelAtSeventyPercent() async throws {
        try await ServedFeed.with(items: 95, pageSize: 10) { feed in
            let response = try await feed.get("/")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "text/html; charset=utf-8")
            #expect(response.header("Content-Security-Policy")?.contains("script-src 'self'") == true)
            let page = RenderedPage(response.text)
            #expect(response.text.hasPrefix("<!doctype html>"))
            #expect(response.text.contains(#"role="feed""#))
            #expect(response.text.contains(#"<script src="/static/feed.js?v="#))
            #expect(page.rows.map(\.position) == Array(1...10))
            #expect(page.rowsBeforeSentinel == 7)
            let sentinel = try #require(page.sentinel)
            #expect(sentinel.next.hasPrefix("/?page=2&after="))
            #expect(sentinel.fragment == sentinel.next.replacingOccurrences(of: "/?", with: "/fragment?"))
            #expect(response.text.contains(#"aria-setsize="95""#))
            #expect(response.text.contains(#"data-page="1" data-url="/""#))
        }
    }

    @Test func followingSentinelsWalksTheWholeFeedOnceAndEndsWithAnEndRow() async throws {
        try await ServedFeed.with(items: 95, pageSize: 10) { feed in
            var target = "/fragment"
            var ids: [String] = []
            var positions: [Int] = []
            var pages = 0
            while true {
                let response = try await feed.get(target)
                #expect(response.status == 200)
                let page = RenderedPage(response.text)
                pages += 1
                ids += page.rows.map(\.id)
                positions += page.rows.map(\.position)
                #expect(!response.text.contains("<html"), "a fragment is not a document")
                guard let sentinel = page.sentinel else {
                    #expect(page.parts.last == .end)
                    #expect(page.rows.count == 5, "the short last page")
                    break
                }
                #expect(page.rowsBeforeSentinel == 7)
                #expect(sentinel.next.hasPrefix("/?page=\(pages + 1)&after="))
                target = sentinel.fragment
                if pages > 20 { break }
            }
            #expect(pages == 10)
            #expect(positions == Array(1...95))
            #expect(Set(ids).count == 95)
        }
    }

    @Test func deepLinksMatchTheCursorPath() async throws {
        try await ServedFeed.with(items: 95, pageSize: 10) { feed in
            let first = RenderedPage(try await feed.get("/fragment").text)
            let second = RenderedPage(try await feed.get(try #require(first.sentinel).fragment).text)
            let deep = try await feed.get("/?page=2")
            #expect(deep.status == 200)
            let deepPage = RenderedPage(deep.text)
            #expect(deepPage.rows.map(\.id) == second.rows.map(\.id))
            // Page 2 as a document links up to the newer items and on to page 3.
            #expect(deep.text.contains(#"<link rel="prev" href="/?page=1&amp;before="#))
            #expect(deep.text.contains(#"<link rel="next" href="/?page=3&amp;after="#))
            #expect(try await feed.get("/?page=10").status == 200)
            #expect(try await feed.get("/?page=11").status == 404)
        }
    }

    @Test func aSentinelFollowsItsThreshold() async throws {
        try await ServedFeed.with(items: 40, pageSize: 31, threshold: 0.5) { feed in
            let page = RenderedPage(try await feed.get("/").text)
            #expect(page.rowsBeforeSentinel == 16)
        }
    }

    @Test func newItemsAtTheTopShowUpWithoutShiftingAReaderOnACursor() async throws {
        // No pre-warm: thumbnails made meanwhile would add their previews to page 1.
        try await ServedFeed.with(items: 30, pageSize: 10, configure: { $0.prewarm.pages = 0 }) { feed in
            let first = RenderedPage(try await feed.get("/fragment").text)
            let before = try await feed.get("/").text
            #expect(try await feed.get("/").text == before, "a repeated page is served from the page cache unchanged")
            try feed.app.store.upsert([FeedItem(guid: "fresh", title: "Fresh at the top", summary: "", published: DemoFeed.newest + 1)])
            let top = try await feed.get("/").text
            #expect(top.contains("Fresh at the top"), "a write must not leave a stale page 1 in the cache")
            let second = RenderedPage(try await feed.get(try #require(first.sentinel).fragment).text)
            #expect(Set(second.rows.map(\.id)).isDisjoint(with: first.rows.map(\.id)))
            #expect(second.rows.first?.position == 12)
        }
    }

    @Test func documentsAndFragmentsAreGzippedForClientsThatAskForIt() async throws {
        // No pre-warm: thumbnails made between the two requests would add their previews to the
        // page, and the gzipped one would be of a larger page than the plain one (CI, 2026-12-03:
        // 6,030 gzipped bytes against 9,302 plain).
        try await ServedFeed.with(items: 30, pageSize: 10, configure: { $0.prewarm.pages = 0 }) { feed in
            for target in ["/", "/fragment"] {
                let plain = try await feed.get(target)
                let gzipped = try await feed.get(target, headers: [("Accept-Encoding", "gzip, deflate")])
                #expect(gzipped.header("Content-Encoding") == "gzip")
                #expect(gzipped.header("Vary") == "Accept-Encoding, Sec-CH-DPR")
                #expect(Array(gzipped.body.prefix(2)) == [0x1f, 0x8b])
                #expect(gzipped.body.count < plain.body.count / 2)
            }
        }
    }

    @Test func aPageIsCompressedOnlyWhenAClientThatAcceptsGzipAsksAndThenKept() async throws {
        try await ServedFeed.with(items: 30, pageSize: 10) { feed in
            let pageTwo = PageCache.Key(revision: feed.app.pages.revision, kind: .document, query: PageQuery(request: .number(2), number: 2))
            // A plain client first: the page is rendered and kept, not compressed.
            let plain = try await feed.get("/?page=2")
            #expect(plain.header("Content-Encoding") == nil)
            #expect(try #require(feed.app.pages.kept(pageTwo)).compressed == false)
            // The first gzip client compresses it, and the compressed form is kept.
            let first = try await feed.get("/?page=2", headers: [("Accept-Encoding", "gzip")])
            #expect(first.header("Content-Encoding") == "gzip" && Array(first.body.prefix(2)) == [0x1f, 0x8b])
            #expect(try #require(feed.app.pages.kept(pageTwo)).compressed)
            let again = try await feed.get("/?page=2", headers: [("Accept-Encoding", "gzip")])
            #expect(again.body == first.body)
            // A page a gzip client asks for cold is rendered and compressed in one go.
            let cold = try await feed.get("/?page=3", headers: [("Accept-Encoding", "gzip")])
            #expect(cold.header("Content-Encoding") == "gzip")
            #expect(try await feed.get("/?page=3").header("Content-Encoding") == nil)
        }
    }

    @Test func staticFilesCarryETagsAndRevalidate() async throws {
        try await ServedFeed.with(items: 5) { feed in
            let script = try await feed.get("/static/feed.js")
            #expect(script.status == 200)
            #expect(script.header("Content-Type") == "text/javascript; charset=utf-8")
            let etag = try #require(script.header("ETag"))
            #expect(try await feed.get("/static/feed.js", headers: [("If-None-Match", etag)]).status == 304)
            let gzipped = try await feed.get("/static/feed.js", headers: [("Accept-Encoding", "gzip")])
            #expect(gzipped.header("Content-Encoding") == "gzip")
            #expect(gzipped.body.count <= 2560, "the thin client must stay within 2.5 KB gzipped")
            #expect(try await feed.get("/static/feed.css").header("Content-Type") == "text/css; charset=utf-8")
        }
    }

    @Test func anEmptyFeedSaysSo() async throws {
        try await ServedFeed.with(items: 0) { feed in
            let response = try await feed.get("/")
            #expect(response.status == 200)
            #expect(response.text.contains("the feed is empty"))
            #expect(RenderedPage(response.text).sentinel == nil)
            #expect(try await feed.get("/?page=2").status == 404)
        }
    }

    @Test func hostileItemTextStaysInert() async throws {
        try await ServedFeed.with(items: 0) { feed in
            try feed.app.store.upsert([
                FeedItem(
                    guid: "x", title: "<script>alert(1)</script>", summary: "<img src=x onerror=alert(2)>",
                    link: "javascript:alert(3)", published: 1)
            ])
            let html = try await feed.get("/").text
            #expect(!html.contains("<script>alert"))
            #expect(!html.contains("<img src=x"))
            #expect(!html.contains("javascript:"))
            #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        }
    }
}
