import HTTPTestClient
import Testing
@testable import OriginFetcher

/// Fetches nobody waits for any more, and shutdown.
@Suite struct CancellationTests {
    @Test func aCancelledFetchEndsAndHangsUp() async throws {
        try await withOrigin { origin, fetcher in
            origin.script("/slow", .delay(.seconds(30), then: .respond(body: [1])))
            // Patient limits: the default cuts an origin silent for 3 s, and on a
            // loaded machine (CI, twice) the origin saw the request only after
            // that, so the fetch had timed out before it could be cancelled.
            let patient = FetchLimits(connectTimeout: .seconds(120), totalTimeout: .seconds(120), lowSpeedLimit: 0)
            let task = Task { await fetcher.result(origin.url("/slow"), limits: patient) }
            #expect(await origin.eventually { $0.requests(to: "/slow") == 1 })
            task.cancel()
            let result = await task.value
            #expect(result.failure == .cancelled, "\(result)")
            #expect(await origin.eventually { $0.abandoned(at: "/slow") == 1 })
            let stats = fetcher.stats
            #expect(stats.cancelled == 1 && stats.inFlight == 0 && stats.finished == 0)
        }
    }

    @Test func aFetchFromACancelledTaskNeverStarts() async throws {
        try await withOrigin { origin, fetcher in
            origin.script("/x", .respond(body: [1]))
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return await fetcher.result(origin.url("/x"))
            }
            #expect(await task.value.failure == .cancelled)
            #expect(origin.requests(to: "/x") == 0)
            #expect(fetcher.stats.started == 0 && fetcher.stats.cancelled == 1)
        }
    }

    @Test func aFetchWaitingForAConnectionCanBeCancelled() async throws {
        try await withOrigin(fetcher: OriginFetcher(maxConnectionsPerHost: 1)) { origin, fetcher in
            // The first fetch holds the only connection for as long as the test needs.
            origin.script("/first", .delay(.seconds(30), then: .respond(body: [1])))
            origin.script("/second", .respond(body: [2]))
            // Patient limits: on a loaded machine this test may take a while, and
            // the first fetch must be cancelled, not timed out.
            let patient = FetchLimits(connectTimeout: .seconds(120), totalTimeout: .seconds(120), lowSpeedLimit: 0)
            let first = Task { await fetcher.result(origin.url("/first"), limits: patient) }
            #expect(await origin.eventually { $0.requests(to: "/first") == 1 })
            let second = Task { await fetcher.result(origin.url("/second"), limits: patient) }
            // The second waits in the fetcher's own queue for the only connection.
            #expect(await origin.eventually { _ in fetcher.stats.inFlight == 2 })
            second.cancel()
            let secondResult = await second.value
            #expect(secondResult.failure == .cancelled, "\(secondResult)")
            #expect(origin.requests(to: "/second") == 0)
            first.cancel()
            #expect(await first.value.failure == .cancelled)
            // The freed connection slot serves the next fetch.
            #expect(await fetcher.result(origin.url("/second")).body?.bytes == [2])
            #expect(fetcher.stats.cancelled == 2 && fetcher.stats.finished == 1 && fetcher.stats.inFlight == 0)
        }
    }

    @Test func shutdownEndsFetchesInFlight() async throws {
        try await withOrigin { origin, fetcher in
            origin.script("/slow", .delay(.seconds(30), then: .respond(body: [1])))
            let patient = FetchLimits(connectTimeout: .seconds(120), totalTimeout: .seconds(120), lowSpeedLimit: 0)
            let tasks = (0..<3).map { _ in Task { await fetcher.result(origin.url("/slow"), limits: patient) } }
            // Patient waits: a loaded CI machine can take long to get three connections through.
            #expect(await origin.eventually(timeout: .seconds(90)) { $0.requests(to: "/slow") == 3 })
            fetcher.shutdown()
            for task in tasks { #expect(await task.value.failure == .cancelled) }
            #expect(await fetcher.result(origin.url("/slow")).failure == .cancelled)
            #expect(await origin.eventually(timeout: .seconds(90)) { $0.abandoned(at: "/slow") == 3 })
            #expect(fetcher.stats.inFlight == 0)
            #expect(fetcher.stats.cancelled == 4)
        }
    }

    @Test func everyFetchEndsExactlyOnceUnderRandomCancellation() async throws {
        try await withOrigin(fetcher: OriginFetcher(maxConnectionsPerHost: 4)) { origin, fetcher in
            origin.script("/item", .delay(.milliseconds(20), then: .respond(body: patternBytes(3000))))
            let count = 60
            let outcomes = await withTaskGroup(of: Result<FetchedBody, FetchError>.self) { group in
                var tasks: [Task<Result<FetchedBody, FetchError>, Never>] = []
                for _ in 0..<count {
                    let task = Task { await fetcher.result(origin.url("/item")) }
                    tasks.append(task)
                    group.addTask { await task.value }
                }
                for (index, task) in tasks.enumerated() where index % 3 == 0 {
                    try? await Task.sleep(for: .milliseconds(index % 7))
                    task.cancel()
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.count == count)
            for outcome in outcomes {
                #expect(outcome.failure == nil || outcome.failure == .cancelled)
            }
            let stats = fetcher.stats
            #expect(stats.inFlight == 0)
            #expect(stats.finished + stats.cancelled == count)
            #expect(stats.finished == outcomes.filter { $0.body != nil }.count)
        }
    }
}
