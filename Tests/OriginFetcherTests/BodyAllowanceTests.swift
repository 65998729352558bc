import Foundation
import HTTPTestClient
import Testing

@testable import OriginFetcher

/// The allowance's bookkeeping, without libcurl.
@Suite struct BodyAllowanceStateTests {
    /// Each `take` of exactly so many bytes in turn, answered in order (the
    /// test macros cannot call a mutating method themselves).
    func takes(_ state: inout BodyAllowanceState, _ asks: [(UInt64, Int)]) -> [Bool] {
        asks.map { state.take($0.0, atLeast: $0.1, upTo: $0.1) != nil }
    }

    @Test func aBufferGrowsAsFarAsTheRoomLeft() {
        var state = BodyAllowanceState(limit: 100)
        let (a, b) = (state.register(), state.register())
        let first = state.take(a, atLeast: 10, upTo: 40)
        #expect(first == 40)
        // Room for 60: b asked for at least 10 and would like 80.
        let second = state.take(b, atLeast: 10, upTo: 80)
        #expect(second == 60)
        let none = state.take(a, atLeast: 1, upTo: 40)
        #expect(none == nil)
        _ = state.end(b, keeping: false)
        // Alone past the limit: what it needs and a quarter of what it holds.
        let alone = state.take(a, atLeast: 70, upTo: 80)
        #expect(alone == 70)
        let more = state.take(a, atLeast: 1, upTo: 80)
        #expect(more == 27)
    }

    @Test func bodiesTakeTheirBytesWithinTheLimitOrAlone() {
        var state = BodyAllowanceState(limit: 100)
        let (a, b) = (state.register(), state.register())
        // The limit is reached at b's second ask.
        #expect(takes(&state, [(a, 60), (b, 40), (b, 1)]) == [true, true, false])
        state.pause(b)
        #expect(state.usage.paused == 1 && state.usage.pauses == 1)
        let kept = state.end(a, keeping: false)
        #expect(kept == 0)
        // Alone, a body may pass the limit.
        #expect(takes(&state, [(b, 200)]) == [true])
        #expect(state.usage.paused == 0 && state.usage.onTheWireBytes == 240 && state.usage.peakBytes == 240)
    }

    @Test func bytesHandedOverCountUntilTheyAreLetGo() {
        var state = BodyAllowanceState(limit: 100)
        let (a, b) = (state.register(), state.register())
        #expect(takes(&state, [(a, 70)]) == [true])
        let kept = state.end(a, keeping: true)
        #expect(kept == 70)
        // What was handed over still counts: b is not alone.
        #expect(takes(&state, [(b, 40)]) == [false])
        state.pause(b)
        #expect(state.stalled() == nil, "room comes when the body handed over is let go")
        state.letGo(70)
        #expect(takes(&state, [(b, 40)]) == [true])
        #expect(state.usage.handedOverBytes == 0 && state.usage.onTheWireBytes == 40)
    }

    @Test func aFetchPausedWhenTheLastBodyHandedOverIsLetGoIsAloneAndGoesOn() {
        var state = BodyAllowanceState(limit: 100)
        let (a, b) = (state.register(), state.register())
        #expect(takes(&state, [(a, 60)]) == [true])
        #expect(state.end(a, keeping: true) == 60)
        #expect(takes(&state, [(b, 40), (b, 20)]) == [true, false])
        state.pause(b)
        // The body handed over is let go: b, alone, is not to end; it takes again when resumed.
        state.letGo(60)
        #expect(state.stalled() == nil)
        #expect(takes(&state, [(b, 200)]) == [true])
    }

    @Test func whenEveryHolderIsPausedTheYoungestIsNamed() {
        var state = BodyAllowanceState(limit: 100)
        let (a, b, c) = (state.register(), state.register(), state.register())
        #expect(takes(&state, [(a, 50), (b, 40), (a, 20)]) == [true, true, false])
        state.pause(a)
        #expect(state.stalled() == nil, "b still receives")
        #expect(takes(&state, [(c, 20)]) == [false])
        state.pause(c)
        #expect(state.stalled() == nil, "c holds nothing; b still receives")
        #expect(takes(&state, [(b, 20)]) == [false])
        state.pause(b)
        #expect(state.stalled() == b, "a and b both wait: the younger holder goes")
        _ = state.end(b, keeping: false)
        #expect(takes(&state, [(a, 20), (c, 20)]) == [true, true])
        #expect(state.stalled() == nil)
    }
}

/// Fetches that share an allowance, through libcurl and a real origin.
@Suite struct BodyAllowanceTests {
    @Test func aBodyWaitsForRoomUntilABodyHandedOverIsLetGo() async throws {
        try await withOrigin { origin, fetcher in
            origin.script("/first", .respond(body: patternBytes(500_000, seed: 1), contentLength: false))
            origin.script("/second", .respond(body: patternBytes(800_000, seed: 2), contentLength: false))
            let allowance = BodyAllowance(bytes: 1_000_000)
            var first: FetchedBody? = try await fetcher.fetch(origin.url("/first"), allowance: allowance)
            #expect(first?.bytes.count == 500_000)
            let held = try #require(first?.lease?.bytes)
            #expect(held >= 500_000 && allowance.usage.handedOverBytes == held)
            let second = Task { try await fetcher.fetch(origin.url("/second"), allowance: allowance) }
            // The second body runs out of room, and waits while the first is held.
            var waited = 0
            while allowance.usage.paused == 0, waited < 3000 {
                try await Task.sleep(for: .milliseconds(10))
                waited += 1
            }
            #expect(allowance.usage.paused == 1)
            first = nil
            let body = try await second.value
            #expect(body.bytes == patternBytes(800_000, seed: 2))
            #expect(allowance.usage.peakBytes <= 1_000_000)
            #expect(allowance.usage.pauses >= 1 && allowance.usage.handedOverBytes == body.lease?.bytes)
        }
    }

    @Test func bodiesWithoutALengthNeverHoldMoreThanTheAllowance() async throws {
        try await withOrigin { origin, fetcher in
            for index in 0..<6 {
                origin.script("/\(index)", .respond(body: patternBytes(400_000, seed: UInt8(index)), contentLength: false))
            }
            let allowance = BodyAllowance(bytes: 1_000_000)
            let results = await withTaskGroup(of: Result<Int, FetchError>.self) { group in
                for index in 0..<6 {
                    group.addTask {
                        // Each body is let go as soon as it is checked.
                        do throws(FetchError) {
                            let body = try await fetcher.fetch(origin.url("/\(index)"), allowance: allowance)
                            return .success(body.bytes == patternBytes(400_000, seed: UInt8(index)) ? 1 : 0)
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                return await group.reduce(into: [Result<Int, FetchError>]()) { $0.append($1) }
            }
            // Every body arrived whole, or was ended busy to let the others go on.
            #expect(results.allSatisfy { if case .success(1) = $0 { true } else if case .failure(.busy) = $0 { true } else { false } })
            let usage = allowance.usage
            #expect(usage.peakBytes <= 1_000_000)
            #expect(usage.onTheWireBytes == 0 && usage.handedOverBytes == 0 && usage.paused == 0)
        }
    }

    @Test func aBodyAloneMayPassTheAllowance() async throws {
        try await withOrigin { origin, fetcher in
            origin.script("/large", .respond(body: patternBytes(3_000_000), contentLength: true))
            let allowance = BodyAllowance(bytes: 1_000_000)
            let body = try await fetcher.fetch(origin.url("/large"), allowance: allowance)
            #expect(body.bytes.count == 3_000_000)
            #expect(allowance.usage.pauses == 0)
        }
    }
}
