import Foundation
import HTTPTestClient
import Testing

@testable import Warmfeed

/// AVIF for browsers that take it (issue 25): made ahead, never waited for by
/// a browser that takes WebP too, made from the one original, and never the
/// reason a failing origin is asked again.
@Suite struct AVIFTests {
    static let browser = [("Accept", "image/avif,image/webp,image/apng,image/*,*/*;q=0.8")]

    static func isAVIF(_ response: TestResponse) -> Bool {
        response.status == 200 && response.header("Content-Type") == "image/avif" && Array(response.body.dropFirst(4).prefix(8)) == Array("ftypavif".utf8)
    }

    /// A server (pre-warm making `prewarmPages` ahead) with one item, whose
    /// picture is a JPEG at `path` on a loopback origin: `body` gets both and the item's id.
    static func withOnePicture(at path: String, prewarmPages: Int, _ body: (FaultyOrigin, ServedFeed, Int64) async throws -> Void) async throws {
        let jpeg = try await OriginImages.jpeg()
        try await withOrigin { origin in
            origin.script(path, .respond(contentType: "image/jpeg", body: jpeg))
            try await ServedFeed.with(
                items: 0,
                configure: {
                    $0.prewarm.pages = prewarmPages; $0.allowedOrigins = ServedFeed.loopbackOrigins
                }
            ) { feed in
                try await body(origin, feed, try await feed.addItems(imagesAt: [path], on: origin)[0])
            }
        }
    }

    /// `target` asked for by a browser that takes AVIF until it is answered with one (ten seconds at most).
    static func untilAVIF(_ feed: ServedFeed, _ target: String, from first: TestResponse? = nil) async throws -> TestResponse {
        var next = if let first { first } else { try await feed.get(target, headers: browser) }
        for _ in 0..<200 where !isAVIF(next) {
            try await Task.sleep(for: .milliseconds(50))
            next = try await feed.get(target, headers: browser)
        }
        return next
    }

    @Test func aBrowserThatTakesAVIFGetsTheWebPAtOnceAndTheAVIFOnceItIsMade() async throws {
        try await Self.withOnePicture(at: "/a.jpg", prewarmPages: 0) { origin, feed, id in
            let first = try await feed.get("/thumbs/\(id)/2x", headers: Self.browser)
            #expect(first.status == 200 && first.header("Content-Type") == "image/webp", "no AVIF yet: the WebP, at once")
            #expect(first.header("Vary") == "Accept")
            // The AVIF is made after it, for whoever comes next.
            let next = try await Self.untilAVIF(feed, "/thumbs/\(id)/2x", from: first)
            #expect(Self.isAVIF(next))
            #expect(next.header("ETag") != first.header("ETag"), "another representation, another validator")
            #expect(origin.requests(to: "/a.jpg") == 1, "the AVIF came from the original the WebP was made from")
            let stats = try await feed.adminJSON()
            #expect((stats["avif_fallbacks"] as? Int ?? 0) >= 1)
            // A browser without AVIF still gets the WebP, and JPEG is still there.
            #expect(try await feed.thumbnail(id, "2x").header("Content-Type") == "image/webp")
            #expect(try await feed.thumbnail(id, "2x", webp: false).header("Content-Type") == "image/jpeg")
        }
    }

    /// With pre-warm on, a browser that takes AVIF and hits the WebP in memory
    /// (from many connections at once) is noted in its thread's ring, and
    /// pre-warm's line makes the AVIF once, from the original the WebP came from.
    @Test func hitsOnTheWebPFromManyThreadsHavePreWarmMakeTheAVIFOnce() async throws {
        try await Self.withOnePicture(at: "/b.jpg", prewarmPages: 2) { origin, feed, id in
            // A browser without AVIF first: the WebP is made and kept.
            #expect(try await feed.thumbnail(id, "1x").header("Content-Type") == "image/webp")
            let resizes = try await feed.adminJSON()["resizes"] as? Int ?? 0
            try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<32 { group.addTask { try await feed.get("/thumbs/\(id)/1x", headers: Self.browser).header("Content-Type") } }
                for try await type in group { #expect(type == "image/webp" || type == "image/avif") }
            }
            #expect(Self.isAVIF(try await Self.untilAVIF(feed, "/thumbs/\(id)/1x")), "pre-warm made the AVIF the hits were answered without")
            #expect(try await feed.adminJSON()["resizes"] as? Int == resizes + 1, "made once, however many hits asked")
            #expect(origin.requests(to: "/b.jpg") == 1)
        }
    }

    @Test func aClientThatTakesOnlyAVIFWaitsForIt() async throws {
        let jpeg = try await OriginImages.jpeg()
        try await withOrigin { origin in
            origin.script("/b.jpg", .respond(contentType: "image/jpeg", body: jpeg))
            try await ServedFeed.with(
                items: 0,
                configure: {
                    $0.prewarm.pages = 0; $0.allowedOrigins = ServedFeed.loopbackOrigins
                }
            ) { feed in
                let id = try await feed.addItems(imagesAt: ["/b.jpg"], on: origin)[0]
                // As a cluster's node asks an original's owner: exactly the format it wants.
                let avif = try await feed.get("/thumbs/\(id)/1x", headers: [("Accept", "image/avif")])
                #expect(Self.isAVIF(avif))
                #expect(try await feed.get("/thumbs/\(id)/1x", headers: Self.browser).header("Content-Type") == "image/avif")
            }
        }
    }

    @Test func aFailingOriginIsAskedOnceWhateverFormatsAndSizesAreAskedFor() async throws {
        try await withOrigin { origin in
            origin.script("/dead.jpg", .respond(status: 500, body: Array("no".utf8)))
            // The failure is remembered for the whole test: the four asks took 12 s once, on a
            // loaded machine, past the default 5 s, and the origin was rightly asked again.
            try await ServedFeed.with(
                items: 0,
                configure: {
                    $0.prewarm.pages = 0
                    $0.allowedOrigins = ServedFeed.loopbackOrigins
                    $0.thumbnails.firstNegativeTTL = .seconds(600)
                    $0.thumbnails.negativeTTL = .seconds(600)
                }
            ) { feed in
                let id = try await feed.addItems(imagesAt: ["/dead.jpg"], on: origin)[0]
                for (variant, accept) in [("1x", Self.browser[0].1), ("2x", Self.browser[0].1), ("1x", "image/avif"), ("2x", "image/jpeg")] {
                    let response = try await feed.get("/thumbs/\(id)/\(variant)", headers: [("Accept", accept)])
                    #expect(response.status == 200 && response.header("X-Warmfeed-Placeholder") == "1", "\(variant) \(accept)")
                }
                #expect(origin.requests(to: "/dead.jpg") == 1, "every variant is made from the one original that failed")
            }
        }
    }

    /// Waits until pre-warm has heard of a reader and has no page job queued or running (at most 10 s).
    static func untilPrewarmIsIdle(_ feed: ServedFeed) async throws {
        for _ in 0..<200 {
            let prewarm = try await feed.adminJSON()["prewarm"] as? [String: Any]
            let heard = (prewarm?["readers"] as? Int ?? 0) >= 1
            if heard && (prewarm?["queued"] as? Int) == 0 && (prewarm?["running"] as? Int) == 0 { return }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @Test func preWarmMakesTheAVIFAheadOnceReadersTakeIt() async throws {
        try await ServedFeed.with(items: 100, configure: { $0.prewarm.pages = 2 }) { feed in
            // A browser that takes AVIF asks for a thumbnail first, so every page pre-warm plans
            // from here on makes AVIF too (a page warmed before that, in WebP alone, would not:
            // its readers' missed AVIF is made for the next one). Then its reader is on page 1.
            let top = try #require(try await feed.app.store.page(.number(1), size: 10)?.items.first?.id)
            _ = try await feed.get("/thumbs/\(top)/1x", headers: Self.browser)
            let cookie = try #require(try await feed.get("/", headers: [("Sec-Fetch-Mode", "navigate")]).header("Set-Cookie"))
            let reader = [("Cookie", String(cookie.prefix { $0 != ";" }))]
            // Page 1's pages ahead are warm before they move on. (Sent within a few
            // milliseconds of the first view, the move to page 3 reached pre-warm in the
            // same drain, and in one run of six page 4's AVIF was not made: a separate
            // question, noted in issue 36's closing note.)
            try await Self.untilPrewarmIsIdle(feed)
            // They move to page 3: pages 4 and 5 are warmed ahead, AVIF included.
            _ = try await feed.get("/?page=3", headers: reader)
            let ahead = try #require(try await feed.app.store.page(.number(4), size: 10)?.items.last?.id)
            // Pre-warm makes AVIF once its page jobs are done (with CPU to spare): wait until no
            // page job, no AVIF page and no thumbnail job has been under way for a quarter of a second.
            var quiet = 0
            for _ in 0..<600 where quiet < 5 {
                try await Task.sleep(for: .milliseconds(50))
                let stats = try await feed.adminJSON()
                let prewarm = stats["prewarm"] as? [String: Any]
                let idle =
                    (prewarm?["queued"] as? Int) == 0 && (prewarm?["running"] as? Int) == 0 && (prewarm?["done"] as? Int ?? 0) >= 3
                    && (stats["in_flight"] as? Int) == 0 && (prewarm?["avif_pages_waiting"] as? Int) == 0
                quiet = idle ? quiet + 1 : 0
            }
            #expect(quiet == 5)
            let before = try await feed.adminJSON()["avif_fallbacks"] as? Int
            #expect(Self.isAVIF(try await feed.get("/thumbs/\(ahead)/1x", headers: Self.browser)), "page 4's AVIF was made ahead")
            #expect(try await feed.adminJSON()["avif_fallbacks"] as? Int == before)
        }
    }
}
