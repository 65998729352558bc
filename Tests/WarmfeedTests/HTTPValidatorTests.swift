import Foundation
import HTTPTestClient
import Testing
import WarmfeedCore

@testable import Warmfeed

/// HTTP as the web expects it (issue 25): pages and fragments carry a
/// validator and answer a client whose copy is current with 304; so do
/// thumbnails; caching headers say no more than they must (httplint's rules);
/// a browser that navigates to a wrong address gets a page, not plain text.
@Suite struct HTTPValidatorTests {
    @Test func pagesAndFragmentsAnswerACurrentCopyWith304UntilTheFeedChanges() async throws {
        // No pre-warm: a thumbnail made meanwhile would bring its row's preview, and with it a
        // new rendering of the page, under a new validator (that case is the next test's).
        try await ServedFeed.with(items: 40, configure: { $0.prewarm.pages = 0 }) { feed in
            for target in ["/", "/?page=2", "/fragment?page=2"] {
                let first = try await feed.get(target)
                let etag = try #require(first.header("ETag"), "\(target)")
                #expect(etag.hasPrefix("W/\"") && etag.hasSuffix("\""), "\(target): \(etag)")
                #expect(first.header("Cache-Control") == "no-cache")
                #expect(first.header("Vary") == "Accept-Encoding, Sec-CH-DPR", "every hint asked for with Accept-CH is in Vary")
                // The same page again, from the cache: the same validator.
                #expect(try await feed.get(target).header("ETag") == etag)
                let revalidated = try await feed.get(target, headers: [("If-None-Match", etag)])
                #expect(revalidated.status == 304 && revalidated.body.isEmpty, "\(target)")
                #expect(revalidated.header("ETag") == etag && revalidated.header("Cache-Control") == "no-cache")
                // The gzipped bytes share the (weak) validator.
                let gzipped = try await feed.get(target, headers: [("Accept-Encoding", "gzip"), ("If-None-Match", "\"other\", \(etag)")])
                #expect(gzipped.status == 304, "\(target)")
                // Another validator, or a bad one, gets the page.
                #expect(try await feed.get(target, headers: [("If-None-Match", "W/\"nope\"")]).status == 200)
            }
            let before = try #require(try await feed.get("/").header("ETag"))
            // A new item changes page 1: the old validator no longer matches.
            let newest = try #require(try await feed.app.store.page(.number(1), size: 1)?.items.first).published
            try feed.app.store.upsert([FeedItem(guid: "new", title: "New", summary: "", published: newest + 1)])
            let after = try await feed.get("/", headers: [("If-None-Match", before)])
            #expect(after.status == 200 && after.header("ETag") != before)
            #expect(after.text.contains(">New<"))
        }
    }

    @Test func aPageRenderedAgainWithItsPreviewsHasANewValidator() async throws {
        try await ServedFeed.with(items: 10, configure: { $0.prewarm.pages = 0 }) { feed in
            let before = try #require(try await feed.get("/").header("ETag"))
            // Page 1's thumbnails made: their previews come with them, and page 1 is rendered again with them.
            let ids = try await feed.app.store.page(.number(1), size: 10)?.items.compactMap(\.id) ?? []
            for id in ids { #expect(try await feed.thumbnail(id).status == 200) }
            // Previews are kept in batches: the page settles once the last of them is in.
            var (after, previous) = (before, before)
            for _ in 0..<200 where after == before || after != previous {
                try await Task.sleep(for: .milliseconds(100))
                previous = after
                after = try #require(try await feed.get("/").header("ETag"))
            }
            #expect(after != before, "the page with its previews kept the validator of the page without them")
            #expect(try await feed.get("/", headers: [("If-None-Match", before)]).status == 200)
            // A client holding the current validator gets 304. Read just before asking: a last
            // batch of previews can still land after the loop above saw the page settle.
            var notModified = false
            for _ in 0..<20 where !notModified {
                let current = try #require(try await feed.get("/").header("ETag"))
                notModified = try await feed.get("/", headers: [("If-None-Match", current)]).status == 304
            }
            #expect(notModified, "a client holding the page's current validator was sent the page again")
        }
    }

    @Test func thumbnailsHaveAValidatorAndALongLife() async throws {
        let jpeg = try await OriginImages.jpeg()
        try await withOrigin { origin in
            origin.script("/t.jpg", .respond(contentType: "image/jpeg", body: jpeg))
            try await ServedFeed.with(items: 0, configure: { $0.allowedOrigins = ServedFeed.loopbackOrigins }) { feed in
                let id = try await feed.addItems(imagesAt: ["/t.jpg"], on: origin)[0]
                let made = try await feed.thumbnail(id)  // a miss, made now
                let etag = try #require(made.header("ETag"))
                #expect(made.status == 200 && made.header("Cache-Control") == "max-age=86400" && made.header("Vary") == "Accept")
                let kept = try await feed.thumbnail(id)  // from memory
                #expect(kept.header("ETag") == etag && kept.body == made.body)
                let revalidated = try await feed.get("/thumbs/\(id)/1x", headers: [("Accept", "image/webp,*/*"), ("If-None-Match", etag)])
                #expect(revalidated.status == 304 && revalidated.body.isEmpty && revalidated.header("ETag") == etag)
                #expect(revalidated.header("Cache-Control") == "max-age=86400")
                // The JPEG is another representation: its own validator.
                let jpegVariant = try await feed.thumbnail(id, webp: false)
                #expect(jpegVariant.status == 200 && jpegVariant.header("ETag") != etag)
                let stale = try await feed.get("/thumbs/\(id)/1x", headers: [("Accept", "image/jpeg"), ("If-None-Match", etag)])
                #expect(stale.status == 200)
            }
        }
    }

    @Test func theFirstScreensThumbnailsAreFetchedFirstAndTheNextPageLinkFollowsTheFeed() async throws {
        try await ServedFeed.with(items: 40, pageSize: 10) { feed in
            let html = try await feed.get("/").text
            let images = html.components(separatedBy: "<img ").dropFirst().map { String($0.prefix { $0 != ">" }) }
            #expect(images.count == 10)
            #expect(images.prefix(5).allSatisfy { $0.contains("fetchpriority=\"high\"") && !$0.contains("loading=") })
            #expect(images.dropFirst(5).allSatisfy { $0.contains("loading=\"lazy\"") && !$0.contains("fetchpriority") })
            // A fragment's rows are all lazy: none of them is on a first screen.
            #expect(!(try await feed.get("/fragment?page=2").text.contains("fetchpriority")))
            // The feed holds only articles: the sentinel is an empty marker, the link comes after the feed.
            #expect(html.contains("aria-hidden=\"true\"></div>"))
            let feedEnd = try #require(html.range(of: "</div>\n<p class=\"more\"><a href=\"/?page=2&amp;after="))
            #expect(html[feedEnd.upperBound...].contains("rel=\"next\">Next page (2) →</a></p>"))
            #expect(html.contains("<h1><a class=\"brand\" href=\"/\">Warmfeed</a></h1>"))
        }
    }

    @Test func aBrowserThatNavigatesToAWrongAddressGetsAPageAndOthersGetPlainText() async throws {
        try await ServedFeed.with(items: 10) { feed in
            let page = try await feed.get("/no/such/place", headers: [("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")])
            #expect(page.status == 404 && page.header("Content-Type")?.hasPrefix("text/html") == true)
            #expect(page.text.contains("<html lang=\"en\">") && page.text.contains("<h1>404 Not Found</h1>"))
            let plain = try await feed.get("/no/such/place")
            #expect(plain.status == 404 && plain.header("Content-Type")?.hasPrefix("text/plain") == true)
            let post = try await feed.request("POST", "/fragment")
            #expect(post.status == 405 && post.header("Allow") == "GET, HEAD")
        }
    }
}
