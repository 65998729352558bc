import Foundation
import HTTPTestClient
import ImageFormats
import RedisClient
import Testing

@testable import Warmfeed
@testable import WarmfeedCore

/// A cluster whose Redis or peers lie (issue 34): whoever can write to Redis
/// names a stranger as an original's owner, puts bytes that are no thumbnail
/// under a thumbnail's key, or gives a failure a year to live; a peer answers
/// with bytes that are not the thumbnail asked for, or sends the asker
/// elsewhere. No stranger is asked (its canary counts 0 requests), no bad
/// byte is served or stored, no lifetime passes its ceiling, and every
/// reader gets a real thumbnail or, for a failure, a placeholder that ends.
@Suite(.serialized, .enabled(if: OwnRedis.available)) struct HostileClusterTests {
    typealias Cluster = SharedTierTests.Cluster

    /// A client of the cluster's Redis of the test's own, for values redis-cli cannot write (binary ones).
    static func writer(_ cluster: Cluster) throws -> RedisClient {
        RedisClient(try RedisLocation(cluster.redis.url), connections: 1, timeout: .seconds(5))
    }

    /// The one key matching `pattern`, waiting (up to 10 s) for a node to write it.
    static func onlyKey(_ cluster: Cluster, _ pattern: String) async throws -> String {
        for _ in 0..<200 {
            let keys = try cluster.redis.cli("KEYS", pattern).split(whereSeparator: \.isNewline).map(String.init)
            if keys.count == 1 { return keys[0] }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("no single key matches \(pattern): \(try cluster.redis.cli("KEYS", "*"))")
        return pattern
    }

    /// A real 1x WebP: its header reads, and it fits its box.
    static func isWebP(_ response: TestResponse) -> Bool {
        guard SharedTierTests.isImage(response), let header = ImageHeader.read(response.body, as: .webp) else { return false }
        return header.width <= 160 && header.height <= 120
    }

    /// Item `id`'s picture name in `node`'s store: what its keys and a peer's address carry.
    static func picture(_ node: ServedFeed, _ id: Int64) async throws -> String {
        let item = try #require(try await node.app.store.item(id: id))
        return try #require(Picture(item: item, epoch: node.app.store.epoch)).name
    }

    static func milliseconds(_ cluster: Cluster, _ key: String) throws -> Int {
        Int(try cluster.redis.cli("PTTL", key).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -3
    }

    @Test func anOwnerNamedInRedisWhoIsNoPeerIsNeverAsked() async throws {
        try await withOrigin { canary in
            try await Cluster.with { cluster in
                let picture = try await Self.picture(cluster.nodes[0], 110)
                canary.script("/thumbs/\(picture)/2x", .respond(contentType: "image/webp", body: Array("from a stranger".utf8)))
                #expect(Self.isWebP(try await cluster.nodes[0].thumbnail(110)))
                // Whoever can write to Redis names a stranger as the original's owner.
                let owner = try await Self.onlyKey(cluster, "wf:*:o:*")
                try cluster.redis.cli("SET", owner, "U\(canary.url(""))", "EX", "3600")
                let double = try await cluster.nodes[1].thumbnail(110, "2x")
                #expect(SharedTierTests.isImage(double) && ImageHeader.read(double.body, as: .webp) != nil)
                #expect(canary.connectionsAccepted == 0, "the stranger was asked")
                #expect(try await cluster.shared(1)["owners_refused"] as? Int == 1)
                // Node 2 fetched the original itself and owns it now.
                #expect(cluster.originRequests == 2)
                // Its record is written beside the answer, not before it.
                let node2 = "Uhttp://127.0.0.1:\(cluster.nodes[1].port)"
                var record = try cluster.redis.cli("GET", owner)
                for _ in 0..<200 where !record.hasPrefix(node2) {
                    try await Task.sleep(for: .milliseconds(50))
                    record = try cluster.redis.cli("GET", owner)
                }
                #expect(record.hasPrefix(node2), "the owner record says \(record)")
            }
        }
    }

    @Test func aPeerThatRedirectsIsNotFollowed() async throws {
        try await withOrigin { canary in
            try await withOrigin { peer in
                try await Cluster.with(nodes: 1) { cluster in
                    let node = cluster.nodes[0]
                    let picture = try await Self.picture(node, 120)
                    peer.script("/thumbs/\(picture)/1x", .redirect(to: canary.url("/thumbs/\(picture)/1x")))
                    node.app.peers.set(["http://127.0.0.1:\(node.port)", peer.url("")])
                    let epoch = node.app.store.epoch
                    try cluster.redis.cli("SET", "wf:\(epoch):o:\(picture)", "U\(peer.url(""))", "EX", "3600")
                    #expect(Self.isWebP(try await node.thumbnail(120)))
                    #expect(peer.requests(to: "/thumbs/\(picture)/1x") == 1)
                    #expect(canary.connectionsAccepted == 0, "the redirect was followed")
                    #expect(try await cluster.shared(0)["owner_unreachable"] as? Int == 1)
                }
            }
        }
    }

    /// A known peer answers with bytes that are not the thumbnail asked for:
    /// words, a JPEG under WebP's type, a WebP twice the box's size.
    @Test func aPeersAnswerThatIsNotTheThumbnailIsNeitherServedNorStored() async throws {
        try await withOrigin { peer in
            try await Cluster.with(nodes: 1) { cluster in
                let node = cluster.nodes[0]
                node.app.peers.set(["http://127.0.0.1:\(node.port)", peer.url("")])
                let epoch = node.app.store.epoch
                let jpeg = try await node.thumbnail(150, webp: false).body
                let double = try await node.thumbnail(151, "2x").body
                let lies: [(Int64, [UInt8])] = [(130, Array("not an image".utf8)), (131, jpeg), (132, double)]
                for (id, body) in lies {
                    let picture = try await Self.picture(node, id)
                    peer.script("/thumbs/\(picture)/1x", .respond(contentType: "image/webp", body: body))
                    try cluster.redis.cli("SET", "wf:\(epoch):o:\(picture)", "U\(peer.url(""))", "EX", "3600")
                    let response = try await node.thumbnail(id)
                    #expect(Self.isWebP(response) && response.body != body, "item \(id)")
                    #expect(peer.requests(to: "/thumbs/\(picture)/1x") == 1)
                    // What Redis keeps for it is the thumbnail this node made, never the peer's bytes.
                    let key = try await Self.onlyKey(cluster, "wf:*:t:\(id)-*:1x:webp")
                    let writer = try Self.writer(cluster)
                    defer { writer.close() }
                    let kept = try await writer.run("GET", key).bytes ?? []
                    #expect(kept.first == UInt8(ascii: "T") && ImageHeader.read(Array(kept.dropFirst()), as: .webp) != nil && Array(kept.dropFirst()) != body)
                }
                #expect(try await cluster.shared(0)["owner_answers_refused"] as? Int == lies.count)
            }
        }
    }

    /// Values under a thumbnail's key that are not it: words, a JPEG under a
    /// WebP's key, a WebP larger than the box. Each is a miss, and goes.
    @Test func aValueInRedisThatIsNotItsThumbnailIsAMissAndGoes() async throws {
        try await Cluster.with { cluster in
            let jpeg = try await cluster.nodes[0].thumbnail(160, webp: false).body
            let double = try await cluster.nodes[0].thumbnail(161, "2x").body
            let writer = try Self.writer(cluster)
            defer { writer.close() }
            for (id, lie) in [(Int64(170), Array("T not an image".utf8)), (171, [UInt8(ascii: "T")] + jpeg), (172, [UInt8(ascii: "T")] + double)] {
                #expect(Self.isWebP(try await cluster.nodes[0].thumbnail(id)))
                let key = try await Self.onlyKey(cluster, "wf:*:t:\(id)-*:1x:webp")
                _ = try await writer.run([Array("SET".utf8), Array(key.utf8), lie])
                let response = try await cluster.nodes[1].thumbnail(id)
                #expect(Self.isWebP(response) && response.body != Array(lie.dropFirst()), "item \(id)")
                let kept = try await writer.run("GET", key)
                #expect(kept != .bytes(lie), "the lie stayed in Redis for item \(id)")
            }
            let shared = try await cluster.shared(1)
            #expect(shared["bad_values"] as? Int == 3)
            #expect(shared["hits"] as? Int == 0)
        }
    }

    /// A failure written with a year to live: the node serves the placeholder
    /// for at most the longest negative TTL, and cuts the entry in Redis too.
    @Test func aFailureThatWouldLastAYearEndsAtTheLongestNegativeTTL() async throws {
        try await Cluster.with(configure: {
            $0.thumbnails.negativeTTL = .seconds(2); $0.thumbnails.firstNegativeTTL = .seconds(1)
        }) { cluster in
            #expect(Self.isWebP(try await cluster.nodes[0].thumbnail(180)))
            let key = try await Self.onlyKey(cluster, "wf:*:t:180-*:1x:webp")
            try cluster.redis.cli("SET", key, "N", "PX", String(365 * 86_400_000))
            #expect(isPlaceholder(try await cluster.nodes[1].thumbnail(180)))
            let left = try Self.milliseconds(cluster, key)
            #expect(left <= 2000, "\(left) ms left")
            #expect(try await cluster.shared(1)["lifetimes_capped"] as? Int == 1)
            // The placeholder ends: within seconds the thumbnail (from its owner, node 1).
            var response = try await cluster.nodes[1].thumbnail(180)
            for _ in 0..<200 where !Self.isWebP(response) {
                try await Task.sleep(for: .milliseconds(50))
                response = try await cluster.nodes[1].thumbnail(180)
            }
            #expect(Self.isWebP(response))
        }
    }

    /// An original's failure and its owner record without end, and a claim
    /// without end: each is cut to its ceiling as it is read.
    @Test func recordsAndClaimsWithoutEndAreCutToTheirCeilings() async throws {
        try await Cluster.with(configure: {
            $0.thumbnails.negativeTTL = .seconds(2); $0.thumbnails.firstNegativeTTL = .seconds(1)
        }) { cluster in
            let (first, second) = (cluster.nodes[0], cluster.nodes[1])
            let epoch = first.app.store.epoch
            let (p190, p191, p192) = (try await Self.picture(first, 190), try await Self.picture(first, 191), try await Self.picture(first, 192))
            // A failed original, for ever.
            try cluster.redis.cli("SET", "wf:\(epoch):o:\(p190)", "N")
            #expect(isPlaceholder(try await first.thumbnail(190)))
            #expect(try Self.milliseconds(cluster, "wf:\(epoch):o:\(p190)") <= 2000)
            // An owner record, for ever: cut to a day (and the owner asked).
            #expect(Self.isWebP(try await first.thumbnail(191)))
            // The record is written beside the reader's answer, not before it: made endless once it is there.
            _ = try await Self.onlyKey(cluster, "wf:\(epoch):o:\(p191)")
            try cluster.redis.cli("PERSIST", "wf:\(epoch):o:\(p191)")
            #expect(SharedTierTests.isImage(try await second.thumbnail(191, "2x")))
            let owner = try Self.milliseconds(cluster, "wf:\(epoch):o:\(p191)")
            #expect(owner > 0 && owner <= 86_400_000, "\(owner) ms left")
            // A claim held by no node, for ever: cut to the claim's 5 s, then taken over.
            try cluster.redis.cli("SET", "wf:\(epoch):c:\(p192)", "a node long gone")
            #expect(Self.isWebP(try await first.thumbnail(192)))
            #expect(try await cluster.shared(0)["claims_taken_over"] as? Int == 1)
            #expect(cluster.originRequests == 2)
            let cappedByFirst = try await cluster.shared(0)["lifetimes_capped"] as? Int
            let cappedBySecond = try await cluster.shared(1)["lifetimes_capped"] as? Int
            #expect(cappedByFirst == 2 && cappedBySecond == 1)
        }
    }

    /// Redis's port answers garbage to everything: the node serves pages and
    /// thumbnails from its own tiers, and says Redis is not usable.
    @Test func aNodeWhoseRedisAnswersGarbageServesFromItsOwnTiers() async throws {
        let hostile = try HostileRedis { _ in .send(Array("-ERR\r\n:garbage\r\n$-7\r\n*x\r\n".utf8)) }
        defer { hostile.stop() }
        try await Cluster.with(nodes: 1, redisURL: hostile.url(password: "p")) { cluster in
            let node = cluster.nodes[0]
            let page = try await node.get("/")
            #expect(page.status == 200)
            for id in Int64(100)...Int64(104) { #expect(Self.isWebP(try await node.thumbnail(id))) }
            let shared = try await cluster.shared(0)
            #expect(shared["up"] as? Bool == false, "\(shared)")
            #expect(!hostile.commands.isEmpty)
        }
    }
}
