import Foundation
import HTTPTestClient
import Testing

@testable import DemoOrigin
@testable import Warmfeed
@testable import WarmfeedCore

/// One fetch per original in a cluster, whatever sizes its nodes are asked
/// for and whenever: the node that fetched an original owns it (its disk
/// keeps it) and makes its other sizes for the other nodes.
@Suite(.serialized, .enabled(if: OwnRedis.available)) struct SharedOriginalsTests {
    typealias Cluster = SharedTierTests.Cluster

    static func isImage(_ response: TestResponse) -> Bool { SharedTierTests.isImage(response) }

    func resizes(_ cluster: Cluster) async throws -> Int {
        var total = 0
        for node in cluster.nodes.indices { total += try await cluster.stats(node)["resizes"] as! Int }
        return total
    }

    /// A dense screen and a plain one read the same items on two nodes at once.
    @Test func aDenseAndAPlainReaderOnTwoNodesCostOneFetchPerOriginal() async throws {
        try await Cluster.with { cluster in
            let ids = Array(Int64(150)...Int64(159))
            let responses = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for id in ids {
                    group.addTask { try await cluster.nodes[0].thumbnail(id, "1x") }
                    group.addTask { try await cluster.nodes[1].thumbnail(id, "2x") }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(responses.count == 20 && responses.allSatisfy(Self.isImage))
            #expect(cluster.origin.requestCounts.count == ids.count)
            #expect(cluster.originRequests == ids.count, "one origin request per original: \(cluster.origin.requestCounts)")
            #expect(try await resizes(cluster) == 2 * ids.count, "one resize per thumbnail")
        }
    }

    /// Readers whose browsers take AVIF on one node, readers whose browsers
    /// do not on the other: one fetch per original still, and each thumbnail
    /// (size and format) made once in the cluster.
    @Test func avifAndWebPReadersOnTwoNodesCostOneFetchPerOriginal() async throws {
        try await Cluster.with { cluster in
            let ids = Array(Int64(170)...Int64(179))
            let responses = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for id in ids {
                    group.addTask { try await cluster.nodes[0].thumbnail(id, "1x") }
                    group.addTask { try await cluster.nodes[1].thumbnail(id, "2x", avif: true) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(responses.count == 20 && responses.allSatisfy { Self.isImage($0) || AVIFTests.isAVIF($0) })
            // The AVIF reader's 2x in AVIF, made once the WebP answered it.
            for id in ids {
                var response = try await cluster.nodes[1].thumbnail(id, "2x", avif: true)
                for _ in 0..<200 where !AVIFTests.isAVIF(response) {
                    try await Task.sleep(for: .milliseconds(50))
                    response = try await cluster.nodes[1].thumbnail(id, "2x", avif: true)
                }
                #expect(AVIFTests.isAVIF(response), "\(id)")
            }
            #expect(cluster.originRequests == ids.count, "one origin request per original: \(cluster.origin.requestCounts)")
            #expect(try await resizes(cluster) == 3 * ids.count, "1x WebP, 2x WebP and 2x AVIF, each made once")
        }
    }

    /// The other size asked for later, on the other node, after the owner's
    /// memory has let the original go: the owner reads it back from its disk.
    @Test func aSizeAskedForLaterOnAnotherNodeCostsNoSecondFetch() async throws {
        try await Cluster.with(configure: { $0.thumbnails.originalsBytes = 0 }) { cluster in
            let ids = Array(Int64(160)...Int64(169))
            for id in ids { #expect(Self.isImage(try await cluster.nodes[0].thumbnail(id, "1x"))) }
            #expect(cluster.originRequests == ids.count)
            for id in ids { #expect(Self.isImage(try await cluster.nodes[1].thumbnail(id, "2x"))) }
            for id in ids { #expect(try await cluster.nodes[1].thumbnail(id, "1x", webp: false).header("Content-Type") == "image/jpeg") }
            #expect(cluster.originRequests == ids.count, "\(cluster.origin.requestCounts)")
            #expect(try await resizes(cluster) == 3 * ids.count)
            let owner = try await cluster.stats(0)
            #expect((owner["originals"] as! [String: Any])["from_disk"] as! Int >= 2 * ids.count)
            let asker = try await cluster.shared(1)
            #expect(asker["owner_asks"] as! Int == 2 * ids.count)
        }
    }

    /// The owner is gone: the asking node forgets it and fetches the original itself.
    @Test func anOwnerThatIsGoneIsForgottenAndTheOriginalFetchedAgain() async throws {
        try await Cluster.with { cluster in
            #expect(Self.isImage(try await cluster.nodes[0].thumbnail(170, "1x")))
            await cluster.nodes[0].stop(keepingData: true)
            #expect(Self.isImage(try await cluster.nodes[1].thumbnail(170, "2x")))
            #expect(cluster.originRequests == 2, "the owner's disk went with it: one more fetch")
            let shared = try await cluster.shared(1)
            #expect(shared["owner_unreachable"] as! Int == 1)
            // The new owner is asked from now on.
            #expect(Self.isImage(try await cluster.nodes[1].thumbnail(170, "1x")))
            #expect(cluster.originRequests == 2)
        }
    }

    /// Two readers with pre-warm on, a plain screen on one node and a dense
    /// one on the other, reading the same pages and their thumbnails: one
    /// origin request per original, one resize per thumbnail in the cluster.
    @Test func mixedScreensWithPrewarmFetchEachOriginalOnceAndMakeEachThumbnailOnce() async throws {
        try await Cluster.with(
            items: 120,
            configure: {
                $0.prewarm.pages = 2; $0.prewarm.pageOneHold = .zero
            }
        ) { cluster in
            let readers: [(node: Int, ratio: String, scale: String, cookie: String)] = [
                (0, "1", "1x", "wf=00000000000000a1"), (1, "2", "2x", "wf=00000000000000b2"),
            ]
            try await withThrowingTaskGroup(of: Void.self) { group in
                for reader in readers {
                    group.addTask {
                        let node = cluster.nodes[reader.node]
                        let headers = [("Cookie", reader.cookie), ("Sec-CH-DPR", reader.ratio)]
                        for page in 2...5 {
                            let html = try await node.get("/fragment?page=\(page)", headers: headers).text
                            // As a browser asks: by the picture the page names.
                            let pictures = html.matches(of: /src="\/thumbs\/(\d+-[0-9a-f]{8})\/1x"/).map { String($0.1) }
                            #expect(pictures.count == 10)
                            for picture in pictures {
                                let response = try await node.get("/thumbs/\(picture)/\(reader.scale)", headers: [("Accept", "image/webp,*/*")])
                                #expect(Self.isImage(response))
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            try await waitUntilIdle(cluster)
            let made = Set(cluster.nodes.flatMap { ReaderScreenTests.made(in: $0.dataFolder) })
            // One request per original, but for a claim the nodes say they took over
            // from a holder that looked gone (on CI's starved cores a holder's renewal
            // came late once: 121 requests for 120) or made without one: each extra
            // fetch must be one of those, counted.
            var fallbacks = 0
            for node in cluster.nodes.indices {
                let shared = try await cluster.shared(node)
                fallbacks += (shared["claims_taken_over"] as! Int) + (shared["claims_unavailable"] as! Int)
            }
            let extra = cluster.originRequests - cluster.origin.requestCounts.count
            #expect(extra <= fallbacks, "one request per original: \(cluster.origin.requestCounts.filter { $0.value > 1 }), fallbacks \(fallbacks)")
            #expect(try await resizes(cluster) >= made.count, "every thumbnail made (\(made.count) made)")
            #expect(try await resizes(cluster) <= made.count + fallbacks, "one resize per thumbnail (\(made.count) made), fallbacks \(fallbacks)")
            #expect(made.contains { $0.hasSuffix("-2x.webp") } && made.contains { $0.hasSuffix("-1x.webp") })
        }
    }

    func waitUntilIdle(_ cluster: Cluster) async throws {
        for _ in 0..<400 {
            var busy = 0
            for node in cluster.nodes.indices {
                let stats = try await cluster.stats(node)
                let prewarm = stats["prewarm"] as? [String: Any]
                busy += (stats["in_flight"] as? Int ?? 0) + (prewarm?["running"] as? Int ?? 0) + (prewarm?["queued"] as? Int ?? 0)
            }
            if busy == 0 { return }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
