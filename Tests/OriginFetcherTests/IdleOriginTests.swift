import HTTPTestClient
import Testing

@testable import OriginFetcher

/// Origins that close kept-alive connections when they sit idle, silently or
/// with an unasked 408 first (CDNs and load balancers do both): a fetch that
/// reuses such a connection is answered all the same, from one retry on a new
/// connection; a failure on a new connection is still a failure.
@Suite struct IdleOriginTests {
    @Test(arguments: [FaultyOrigin.IdleClose.silently(after: .milliseconds(300)), .with408(after: .milliseconds(300))])
    func fetchesAcrossIdleGapsAllSucceed(_ policy: FaultyOrigin.IdleClose) async throws {
        try await withOrigin { origin, fetcher in
            origin.closeIdleConnections(policy)
            for n in 0..<4 { origin.script("/\(n)", .respond(body: [UInt8(n)])) }
            for n in 0..<4 {
                // Each fetch after a gap past the origin's idle limit: its kept connection is gone.
                // Patient limits: on a starved machine a slow answer is not this test's failure.
                let patient = FetchLimits(totalTimeout: .seconds(60), lowSpeedLimit: 0)
                let result = await fetcher.result(origin.url("/\(n)"), limits: patient)
                #expect(
                    result.body?.bytes == [UInt8(n)],
                    """
                    fetch \(n) after an idle gap: \(result); origin accepted \(origin.connectionsAccepted) \
                    connections, closed \(origin.idleConnectionsClosed) idle, saw \(origin.requests(to: "/\(n)")) \
                    requests for it; fetcher \(fetcher.stats)
                    """)
                try await Task.sleep(for: .milliseconds(700))
            }
            #expect(origin.idleConnectionsClosed >= 3)
            for n in 0..<4 { #expect(origin.requests(to: "/\(n)") == 1) }
            #expect(fetcher.stats.failed == 0)
        }
    }

    @Test func aStale408WaitingOnAKeptConnectionIsRetriedOnceOnANewOne() async throws {
        try await withOrigin { origin, fetcher in
            origin.script("/a", .respond(body: [1]))
            origin.script("/b", .respond(body: [2]))
            // Only the 408 closes: the idle close comes, the 408 waits on the connection.
            origin.closeIdleConnections(.with408(after: .milliseconds(200)))
            #expect(await fetcher.result(origin.url("/a")).body?.bytes == [1])
            try await Task.sleep(for: .milliseconds(500))
            #expect(await fetcher.result(origin.url("/b")).body?.bytes == [2])
            // libcurl read the waiting 408 as an answer, or saw the close: either way, one answer for /b.
            #expect(origin.requests(to: "/b") == 1)
            #expect(fetcher.stats.retriedOnNewConnection <= 1)
        }
    }

    @Test func a408OnANewConnectionIsAFailureNotRetried() async throws {
        try await withOrigin { origin, fetcher in
            origin.script("/timeout", .respond(status: 408, contentType: "text/plain", body: Array("slow".utf8)))
            #expect(await fetcher.result(origin.url("/timeout")).failure == .httpStatus(408))
            #expect(origin.requests(to: "/timeout") == 1)
            #expect(fetcher.stats.retriedOnNewConnection == 0)
        }
    }

    @Test func aResetOnAKeptConnectionIsRetriedOnceAndThenIsAFailure() async throws {
        try await withOrigin { origin, fetcher in
            origin.script("/ok", .respond(body: [1]))
            origin.script("/reset", .reset)
            #expect(await fetcher.result(origin.url("/ok")).body?.bytes == [1])
            // On the kept connection the reset comes before any answer: retried once on a
            // new connection, where it resets again, and that is the origin's failure.
            // (No low-speed cut: on a loaded machine the origin's thread for the retry's connection may start late.)
            let patient = FetchLimits(totalTimeout: .seconds(60), lowSpeedLimit: 0)
            let error = try #require(await fetcher.result(origin.url("/reset"), limits: patient).failure)
            // What each side saw, should the second try never reach the origin (a full run once timed out so).
            let seen = "origin accepted \(origin.connectionsAccepted), troubles \(origin.troubles); fetcher \(fetcher.stats)"
            #expect(error.isConnectionFailed, "\(error); \(seen)")
            // (libcurl may make the second try itself; either way, two tries in all.)
            #expect(origin.requests(to: "/reset") == 2, "\(seen)")
            #expect(fetcher.stats.retriedOnNewConnection <= 1)
        }
    }
}
