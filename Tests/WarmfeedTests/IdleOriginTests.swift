import Foundation
import HTTPServer
import HTTPTestClient
import OriginFetcher
import Testing

@testable import Warmfeed
@testable import WarmfeedCore

/// A healthy origin that closes idle connections never yields a placeholder,
/// and our own server, as an origin (the demo origin is one), never leaves a
/// stale answer on a connection a client reuses.
@Suite struct IdleOriginTests {
    @Test(arguments: [FaultyOrigin.IdleClose.silently(after: .milliseconds(300)), .with408(after: .milliseconds(300))])
    func anOriginClosingIdleConnectionsGivesNoPlaceholders(_ policy: FaultyOrigin.IdleClose) async throws {
        let jpeg = try await OriginImages.jpeg(seed: 21)
        try await withOrigin { origin in
            origin.closeIdleConnections(policy)
            let paths = (0..<6).map { "/idle-\($0).jpg" }
            for path in paths { origin.script(path, .respond(contentType: "image/jpeg", body: jpeg)) }
            // Patient limits: on a starved machine (CI runs every suite at once on two
            // cores) a late answer is not this test's failure; a failure the idle close made is.
            try await ServedFeed.with(
                items: 0,
                configure: {
                    $0.prewarm.pages = 0
                    $0.originTimeout = .seconds(60)
                    $0.originStall = .seconds(60)
                    $0.allowedOrigins = ServedFeed.loopbackOrigins
                }
            ) { feed in
                let ids = try await feed.addItems(imagesAt: paths, on: origin)
                var placeholders = 0
                for id in ids {
                    // Each one after a gap past the origin's idle limit, in 1x and 2x.
                    try await Task.sleep(for: .milliseconds(600))
                    for variant in ["1x", "2x"] where isPlaceholder(try await feed.thumbnail(id, variant)) { placeholders += 1 }
                }
                #expect(placeholders == 0)
                #expect(origin.idleConnectionsClosed >= ids.count - 1)
                for path in paths { #expect(origin.requests(to: path) == 1, "\(path)") }
                let stats = try await feed.adminJSON()
                let origin = stats["origin"] as? [String: Any]
                #expect(origin?["errors"] as? Int == 0, "\(origin ?? [:])")
            }
        }
    }

    @Test func libcurlReusingAConnectionToOurServerAcrossAnIdleGapGetsItsAnswer() async throws {
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.headTimeout = 1
        var router = Router()
        router.get("/original") { _ in .now(.plain(200, "picture")) }
        let routes = router
        let server = HTTPServer(configuration: configuration) { routes.reply(to: $0) }
        try server.start()
        let fetcher = OriginFetcher()
        defer { fetcher.shutdown() }
        let url = "http://127.0.0.1:\(server.port)/original"
        for round in 0..<3 {
            let body = try await fetcher.fetch(url).bytes
            #expect(String(decoding: body, as: UTF8.self) == "picture\n", "round \(round)")
            // Longer than the server's head timeout: it closes the idle connection, without a word.
            try await Task.sleep(for: .milliseconds(1800))
        }
        // libcurl found each kept connection closed, not holding a stale 408: nothing needed a retry.
        #expect(fetcher.stats.retriedOnNewConnection == 0)
        #expect(fetcher.stats.failed == 0)
        #expect(server.connections.idleClosed >= 2)
        #expect(server.connections.slowHeads == 0)
        await server.shutdown()
    }
}
