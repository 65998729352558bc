import Foundation
import HTTPTestClient
import Testing

@testable import Warmfeed

/// An origin that serves small originals first, then large ones without a
/// length: the originals in memory stay within their budget, counted by the
/// bytes that arrive (before, the fetches on the wire were counted at what
/// the small ones weighed, and a dozen large bodies arrived at once).
@Suite(.serialized) struct HostileOriginTests {
    @Test func largeOriginalsAfterSmallOnesStayWithinTheOriginalsBudget() async throws {
        let jpeg = try await OriginImages.jpeg(seed: 11)
        // The same picture padded to 3 MB (a JPEG's decoder stops at its end marker), sent without a length.
        let large = jpeg + [UInt8](repeating: 0, count: 3_000_000 - jpeg.count)
        try await withOrigin { origin in
            let small = (0..<4).map { "/small\($0).jpg" }
            let heavy = (0..<24).map { "/large\($0).jpg" }
            for path in small { origin.script(path, .respond(contentType: "image/jpeg", body: jpeg)) }
            for path in heavy { origin.script(path, .respond(contentType: "image/jpeg", body: large, contentLength: false)) }
            // 8 MiB of originals: 4 MiB for those on the wire and waiting for libvips, and the allowance a quarter above.
            try await ServedFeed.with(
                items: 0,
                configure: {
                    $0.thumbnails.originalsBytes = 8 << 20; $0.allowedOrigins = ServedFeed.loopbackOrigins
                    // Not the product's 10 s: 72 MB through an 8 MB budget, on a CI run's two starved cores, once
                    // took a body past 10 s before it ever waited for room (a timeout, rightly the origin's failure).
                    $0.originTimeout = .seconds(60)
                }
            ) { feed in
                let ids = try await feed.addItems(imagesAt: small + heavy, on: origin)
                for id in ids.prefix(small.count) {
                    #expect(try await feed.thumbnail(id).status == 200)
                }
                let answers = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
                    for id in ids.dropFirst(small.count) {
                        group.addTask {
                            let response = try await feed.thumbnail(id)
                            return (response.status, isPlaceholder(response))
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(answers.count == heavy.count && answers.allSatisfy { $0.0 == 200 })
                #expect(answers.filter { !$0.1 }.count > 0, "the large originals are made")
                let stats = try await feed.adminJSON()
                let body = try #require(stats["origin"] as? [String: Any])
                let peak = try #require(body["body_peak_bytes"] as? Int)
                #expect(peak >= 3_000_000, "the bodies were counted")
                #expect(peak <= 5 << 20, "never more than the allowance (or one body alone) at once: \(peak)")
                #expect(body["body_bytes"] as? Int == 0, "every body is let go once its resizes end")
                #expect(body["body_budget_bytes"] as? Int == 5 << 20)
                #expect(stats["negative_entries"] as? Int == 0, "a body that waited for room is not the origin's failure")
            }
        }
    }
}
