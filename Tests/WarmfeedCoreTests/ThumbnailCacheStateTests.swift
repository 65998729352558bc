import Testing
@testable import WarmfeedCore

@Suite struct ThumbnailCacheStateTests {
    typealias State = ThumbnailCacheState<String, Int>
    let a = ThumbnailKey(itemID: 1, variant: ThumbnailVariant(scale: 1, format: .webp))
    let b = ThumbnailKey(itemID: 2, variant: ThumbnailVariant(scale: 1, format: .webp))
    let c = ThumbnailKey(itemID: 3, variant: ThumbnailVariant(scale: 2, format: .jpeg))

    func isStart(_ decision: State.Decision) -> Bool { if case .start = decision { true } else { false } }
    func isJoined(_ decision: State.Decision) -> Bool { if case .joined = decision { true } else { false } }
    func hitValue(_ decision: State.Decision) -> String? { if case .hit(let value) = decision { value } else { nil } }

    @Test func concurrentRequestsShareOneJob() {
        var state = State(memoryBudget: 1000)
        #expect(isStart(state.request(a, now: 0, waiter: 1)))
        #expect(isJoined(state.request(a, now: 0, waiter: 2)))
        #expect(isJoined(state.request(a, now: 0, waiter: nil)))
        #expect(isJoined(state.request(a, now: 0, waiter: 3)))
        #expect(state.isInFlight(a))
        #expect(state.succeed(a, with: "thumb", cost: 10) == [1, 2, 3])
        #expect(!state.isInFlight(a))
        #expect(hitValue(state.request(a, now: 1, waiter: 4)) == "thumb")
        #expect(state.counters.misses == 1 && state.counters.coalesced == 3 && state.counters.hits == 1)
    }

    @Test func prewarmRequestsDoNotCountAsReadersHitsOrMisses() {
        var state = State(memoryBudget: 1000)
        #expect(isStart(state.request(a, now: 0, waiter: nil, fromReader: false)))
        _ = state.succeed(a, with: "warm", cost: 1)
        _ = state.request(a, now: 0, waiter: nil, fromReader: false)
        #expect(state.counters.hits == 0 && state.counters.misses == 0 && state.counters.prewarmStarts == 1)
        #expect(hitValue(state.request(a, now: 0, waiter: nil)) == "warm")
        #expect(state.counters.hits == 1)
    }

    @Test func aPrewarmJobIsJoinedByAReader() {
        var state = State(memoryBudget: 1000)
        #expect(isStart(state.request(a, now: 0, waiter: nil)))  // pre-warm starts it
        #expect(isJoined(state.request(a, now: 0, waiter: 7)))  // the reader arrives first
        #expect(state.succeed(a, with: "x", cost: 1) == [7])
    }

    @Test func memoryIsBoundedByBytesLeastRecentlyUsedFirst() {
        var state = State(memoryBudget: 100)
        for key in [a, b] {
            _ = state.request(key, now: 0, waiter: nil)
            _ = state.succeed(key, with: "v\(key.itemID)", cost: 40)
        }
        _ = state.request(a, now: 1, waiter: nil)  // a is now the most recent
        _ = state.request(c, now: 1, waiter: nil)
        _ = state.succeed(c, with: "v3", cost: 40)
        #expect(state.isCached(a) && state.isCached(c) && !state.isCached(b))
        #expect(state.counters.evictions == 1)
        #expect(state.usage.bytes == 80 && state.usage.budget == 100)
    }

    @Test func failuresAreRememberedForTheTTLThenRetried() {
        var state = State(memoryBudget: 100, negativeTTL: 30)
        _ = state.request(a, now: 100, waiter: 1)
        #expect(isJoined(state.request(a, now: 100, waiter: 2)))
        #expect(state.fail(a, now: 101) == [1, 2])
        for now in [101.0, 110, 130.9] {
            guard case .failedRecently = state.request(a, now: now, waiter: 3) else {
                Issue.record("at \(now) the failure should still be remembered")
                return
            }
        }
        #expect(isStart(state.request(a, now: 131.5, waiter: 4)))
        #expect(state.counters.negativeHits == 3 && state.counters.failures == 1)
        _ = state.succeed(a, with: "ok", cost: 1)
        #expect(hitValue(state.request(a, now: 132, waiter: nil)) == "ok")
    }

    @Test func theNegativeCacheIsBounded() {
        var state = State(memoryBudget: 100, negativeTTL: 30, negativeCapacity: 3)
        for id in 1...10 {
            let key = ThumbnailKey(itemID: Int64(id), variant: ThumbnailVariant(scale: 1, format: .webp))
            _ = state.request(key, now: Double(id), waiter: nil)
            _ = state.fail(key, now: Double(id))
        }
        #expect(state.usage.negative == 3)
        // The newest failures are the ones kept.
        let newest = ThumbnailKey(itemID: 10, variant: ThumbnailVariant(scale: 1, format: .webp))
        guard case .failedRecently = state.request(newest, now: 11, waiter: nil) else {
            Issue.record("the newest failure was forgotten")
            return
        }
    }

    @Test func anAbandonedJobHandsBackItsWaitersAndRemembersNothing() {
        var state = State(memoryBudget: 100)
        _ = state.request(a, now: 0, waiter: 5)
        #expect(state.abandon(a) == [5])
        #expect(isStart(state.request(a, now: 0, waiter: 6)))
        #expect(state.counters.failures == 0)
    }

    @Test func aTooLargeThumbnailIsServedButNotKept() {
        var state = State(memoryBudget: 10)
        _ = state.request(a, now: 0, waiter: 1)
        #expect(state.succeed(a, with: "huge", cost: 11) == [1])
        #expect(!state.isCached(a))
    }
}
