import Foundation
import HTTPTestClient
import Logging
import Testing

@testable import DemoOrigin
@testable import Thumbnails
@testable import Warmfeed
@testable import WarmfeedCore

/// Nodes sharing a real redis-server, a store and one demo origin, all in
/// this process: each thumbnail made once between them, and every Redis fault
/// (stopped, frozen, never there, a node gone while holding a claim) served
/// through without a 5xx.
@Suite(.serialized, .enabled(if: OwnRedis.available)) struct SharedTierTests {
    /// Two nodes on one SQLite file (one feed, one epoch), one Redis, one origin.
    struct Cluster {
        let redis: OwnRedis
        let origin: DemoOrigin
        let nodes: [ServedFeed]
        let folder: String

        static func start(
            nodes count: Int = 2, items: Int = 200, redisURL: String? = nil, configure: (inout WarmfeedConfiguration) -> Void = { _ in }
        ) async throws -> Cluster {
            // As deployed: Redis asks for a password (docker-compose.yml), and each node knows its peers.
            let redis = try OwnRedis(password: "cluster-secret")
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-cluster-\(UUID().uuidString.prefix(8))").path
            let origin = try DemoOrigin(
                folder: URL(fileURLWithPath: folder).appendingPathComponent("origin"), poolFolder: URL(fileURLWithPath: sharedDemoPool),
                latency: .milliseconds(100), logger: Logger(label: "test-origin")
            )
            try await origin.preparePool()
            try origin.start()
            var nodes: [ServedFeed] = []
            for index in 0..<count {
                nodes.append(
                    try await ServedFeed.start(items: items, pageSize: 10) { configuration in
                        configuration.store = "sqlite:\(folder)/feed.sqlite"
                        configuration.redis = redisURL ?? redis.url
                        configuration.demoOrigin = origin.baseURL
                        configuration.nodeName = "node\(index + 1)"
                        configuration.prewarm.pages = 0
                        configure(&configuration)
                    })
            }
            // Each node learns the others' ports once they listen (`--peer` names them in a deployment).
            let peers = nodes.map { "http://127.0.0.1:\($0.port)" }
            for node in nodes { node.app.peers.set(peers) }
            return Cluster(redis: redis, origin: origin, nodes: nodes, folder: folder)
        }

        /// Runs `body` on a cluster started for it, stopped afterwards whether or not `body` throws.
        static func with(
            nodes count: Int = 2, items: Int = 200, redisURL: String? = nil, configure: (inout WarmfeedConfiguration) -> Void = { _ in },
            _ body: (Cluster) async throws -> Void
        ) async throws {
            let cluster = try await start(nodes: count, items: items, redisURL: redisURL, configure: configure)
            do {
                try await body(cluster)
            } catch {
                await cluster.stop()
                throw error
            }
            await cluster.stop()
        }

        func stop() async {
            for node in nodes { await node.stop() }
            await origin.shutdown()
            redis.remove()
            try? FileManager.default.removeItem(atPath: folder)
        }

        func stats(_ node: Int) async throws -> [String: Any] {
            let response = try await nodes[node].get("/admin/cache", headers: [("Authorization", "Bearer test-admin-token-of-32-characters")])
            return try JSONSerialization.jsonObject(with: Data(response.body)) as! [String: Any]
        }

        func shared(_ node: Int) async throws -> [String: Any] {
            try await stats(node)["shared"] as! [String: Any]
        }

        var originRequests: Int { origin.requestCounts.values.reduce(0, +) }
    }

    static func isImage(_ response: TestResponse) -> Bool {
        response.status == 200 && response.header("Content-Type") == "image/webp"
    }

    @Test func twoNodesAskingForTheSameThumbnailsMakeEachOnce() async throws {
        try await Cluster.with { cluster in
            let ids = Array(Int64(150)...Int64(169))
            // Both nodes miss every one of them at the same moment.
            let responses = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for id in ids { for node in cluster.nodes { group.addTask { try await node.thumbnail(id) } } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(responses.count == 40 && responses.allSatisfy(Self.isImage))
            #expect(cluster.origin.requestCounts.count == ids.count)
            #expect(cluster.originRequests == ids.count, "one origin request per original: \(cluster.origin.requestCounts)")
            let resizes = try await (cluster.stats(0)["resizes"] as! Int) + (cluster.stats(1)["resizes"] as! Int)
            #expect(resizes == ids.count)
            let (first, second) = (try await cluster.shared(0), try await cluster.shared(1))
            #expect(
                (first["claims_won"] as! Int) + (second["claims_won"] as! Int) == ids.count,
                "node 1: \(first.filter { $0.key.hasPrefix("claims") || $0.key.hasPrefix("owner") })), node 2: \(second.filter { $0.key.hasPrefix("claims") || $0.key.hasPrefix("owner") })"
            )
            #expect((first["claims_waited"] as! Int) + (second["claims_waited"] as! Int) == ids.count)
            // Afterwards the other node's thumbnails are hits in the shared tier.
            for id in Int64(170)...Int64(174) { #expect(Self.isImage(try await cluster.nodes[0].thumbnail(id))) }
            for id in Int64(170)...Int64(174) { #expect(Self.isImage(try await cluster.nodes[1].thumbnail(id))) }
            #expect(try await cluster.shared(1)["hits"] as! Int >= 5)
            // /metrics says the same.
            let metrics = try await cluster.nodes[1].get("/metrics", headers: [("Authorization", "Bearer test-admin-token-of-32-characters")]).text
            #expect(metrics.contains("warmfeed_shared_up 1"))
            #expect(metrics.contains("warmfeed_thumbnail_shared_hits_total"))
            #expect(metrics.contains("warmfeed_thumbnail_resizes_total"))
            #expect(metrics.contains("warmfeed_shared_claims_won"))
            #expect(cluster.originRequests == ids.count + 5)
        }
    }

    /// `probes`: Redis answers again once a claim has asked again, or once the
    /// client's first probe has failed too (the stall then ends before the second).
    @Test(arguments: [0, 1]) func aStallOfRedisCostsAWaitNotASecondFetch(probes: Int) async throws {
        try await Cluster.with { cluster in
            let ids = Array(Int64(170)...Int64(179))
            // Redis holds every command (a save, a loaded machine) past the nodes' 250 ms timeout:
            // each node's first lookups time out and it calls Redis down, while both nodes miss
            // the same thumbnails. Redis answers again once a claim has met the stall and asked
            // again, not after a fixed time: on a loaded machine the requests may arrive late
            // enough to miss a timed stall (CI saw the claims all run after a 0.6 s one).
            let freeze = try cluster.redis.freezeUntilThawed()
            // Watched on a thread of its own, reading the nodes in this process: asked over HTTP on
            // a loaded machine, the admin view answered after the claims had given up (CI, twice).
            let (nodes, finished) = (cluster.nodes, DispatchSemaphore(value: 0))
            let watcher = Thread {
                let met = { (node: ServedFeed) in
                    guard let shared = node.app.shared else { return false }
                    return shared.snapshot.claimsOutageRetries > 0 && shared.client.status.failedTries > probes
                }
                while !nodes.contains(where: met), finished.wait(timeout: .now() + .milliseconds(2)) == .timedOut {}
                freeze.thaw()
            }
            watcher.start()
            // Until every request is answered: a claim that gave up fetches alone, so they all end.
            let responses = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for id in ids { for node in cluster.nodes { group.addTask { try await node.thumbnail(id) } } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            finished.signal()
            #expect(responses.count == 2 * ids.count && responses.allSatisfy(Self.isImage))
            let shared = [try await cluster.shared(0), try await cluster.shared(1)]
            let total = { (name: String) in shared.map { $0[name] as? Int ?? 0 }.reduce(0, +) }
            #expect(total("errors") > 0, "the stall was met: \(shared)")
            #expect(total("claims_outage_retries") > 0, "no claim met the stall: \(shared)")
            #expect(total("claims_unavailable") == 0, "\(shared)")
            // The claims were asked again once Redis answered: one node fetched each original.
            #expect(cluster.originRequests == ids.count, "one origin request per original: \(cluster.origin.requestCounts)")
        }
    }

    @Test func aFailureOneNodeMetIsRememberedByTheOthers() async throws {
        try await Cluster.with { cluster in
            await cluster.origin.shutdown()
            // Node 1's fetch is refused: the placeholder, remembered in Redis too.
            #expect(isPlaceholder(try await cluster.nodes[0].thumbnail(120)))
            var remembered = false
            // Up to 10 s: a loaded machine writes it late.
            for _ in 0..<200 where !remembered {
                remembered = (try? cluster.redis.cli("KEYS", "wf:*:t:120-*:1x:webp"))?.contains("120") == true
                if !remembered { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(remembered)
            // Node 2 answers from the shared failure without asking the origin.
            #expect(isPlaceholder(try await cluster.nodes[1].thumbnail(120)))
            let node2 = try await cluster.stats(1)
            #expect((node2["origin"] as! [String: Any])["fetches"] as! Int == 0)
            #expect((node2["shared"] as! [String: Any])["failed_hits"] as! Int == 1)
        }
    }

    @Test func aClaimWhoseHolderIsGoneIsTakenOverWhenItExpires() async throws {
        try await Cluster.with(nodes: 1) { cluster in
            // A node that died holding the claim on item 110's original: its claim lives 1.5 s more.
            let store = cluster.nodes[0].app.store
            let item = try #require(try await store.item(id: 110))
            let picture = try #require(Picture(item: item, epoch: store.epoch))
            try cluster.redis.cli("SET", "wf:\(store.epoch):c:\(picture.name)", "dead-node", "PX", "1500")
            #expect(Self.isImage(try await cluster.nodes[0].thumbnail(110)))
            let shared = try await cluster.shared(0)
            #expect(shared["claims_taken_over"] as! Int == 1)
            #expect(cluster.originRequests == 1)
        }
    }

    @Test func redisStoppedWhileServingThenBack() async throws {
        try await Cluster.with(nodes: 1) { cluster in
            let node = cluster.nodes[0]
            #expect(Self.isImage(try await node.thumbnail(130)))
            cluster.redis.stop()
            // Every answer still an image (made here), pages served, the admin view says why.
            for id in Int64(131)...Int64(140) { #expect(Self.isImage(try await node.thumbnail(id))) }
            #expect(try await node.get("/?page=3").status == 200)
            let down = try await cluster.shared(0)
            #expect(down["up"] as? Bool == false)
            #expect((down["problem"] as? String)?.contains("Redis") == true)
            let dashboard = try await node.get("/admin", headers: [("Authorization", "Bearer test-admin-token-of-32-characters")])
            #expect(dashboard.text.contains("Redis cannot be reached"))
            try cluster.redis.start()
            var up = false
            for _ in 0..<100 where !up {
                try await Task.sleep(for: .milliseconds(100))
                up = try await cluster.shared(0)["up"] as? Bool == true
            }
            #expect(up, "the node uses Redis again once it answers")
            #expect(Self.isImage(try await node.thumbnail(141)))
            var written = false
            // Up to 10 s: CI once found nothing after 2.5 s, with the machine loaded.
            for _ in 0..<200 where !written {
                written = (try? cluster.redis.cli("KEYS", "wf:*:t:141-*:1x:webp"))?.contains("141") == true
                if !written { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(written)
        }
    }

    @Test func aFrozenRedisCostsAtMostItsTimeout() async throws {
        try await Cluster.with(nodes: 1) { cluster in
            let node = cluster.nodes[0]
            try cluster.redis.freeze(seconds: 3)
            // Asked while Redis holds every command: each one an image, none a 5xx.
            let responses = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for id in Int64(150)...Int64(159) { group.addTask { try await node.thumbnail(id) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(responses.allSatisfy(Self.isImage))
            #expect(try await node.get("/?page=2").status == 200)
        }
    }

    @Test func aNodeStartsAndServesWithRedisUnreachable() async throws {
        let refusing = try FaultyOrigin.RefusingPort()
        try await Cluster.with(nodes: 1, redisURL: "redis://127.0.0.1:\(refusing.port)/0") { cluster in
            let node = cluster.nodes[0]
            #expect(try await node.get("/").status == 200)
            #expect(Self.isImage(try await node.thumbnail(190)))
            let shared = try await cluster.shared(0)
            #expect(shared["up"] as? Bool == false)
        }
    }
}
