import Testing
@testable import WarmfeedCore

/// Claims on making a thumbnail, in a cluster's shared tier: decided event by
/// event, no Redis, no threads.
@Suite struct ThumbnailClaimTests {
    typealias State = ThumbnailCacheState<String, Int, String>
    let a = ThumbnailKey(itemID: 1, variant: ThumbnailVariant(scale: 1, format: .webp))
    let original: [UInt8] = [0xff, 0xd8, 0xff]

    /// Tier 0 shared (it claims), tier 1 the disk.
    func cluster() -> State { State(memoryBudget: 1000, lookupTiers: 2, claimTier: 0) }

    func made(_ value: String) -> State.Made { State.Made(value: value, bytes: Array(value.utf8), cost: 10) }

    func missEverywhere(_ state: inout State) -> [State.Action] {
        _ = state.request(a, of: "item", waiter: (1, 1), from: .reader, now: 0)
        _ = state.tierAnswered(a, tier: 0, .miss)
        return state.tierAnswered(a, tier: 1, .miss)
    }

    func claims(_ actions: [State.Action]) -> [Int] {
        actions.compactMap { if case .claim(_, let tier) = $0 { tier } else { nil } }
    }

    func fetches(_ actions: [State.Action]) -> Int {
        actions.filter { if case .fetchOriginal = $0 { true } else { false } }.count
    }

    @Test func aMissInEveryTierAsksForTheClaimBeforeTheOrigin() {
        var state = cluster()
        let actions = missEverywhere(&state)
        #expect(claims(actions) == [0])
        #expect(fetches(actions) == 0)
    }

    @Test func theWinnerFetchesAndReleasesItsClaimAfterWritingEveryTier() {
        var state = cluster()
        _ = missEverywhere(&state)
        #expect(fetches(state.claimAnswered(a, .won, now: 0)) == 1)
        _ = state.originalArrived(itemID: 1, .success(original), seconds: 0.1, now: 0)
        let done = state.resized(a, .success(made("x")), seconds: 0.1, now: 0)
        let stores = done.compactMap { if case .store(_, _, let tiers, let claim) = $0 { (tiers, claim) } else { nil } }
        #expect(stores.count == 1 && stores[0].0 == [0, 1] && stores[0].1 == 0)
        #expect(state.counters.claimsWon == 1 && state.counters.resizes == 1)
    }

    @Test func aThumbnailAnotherNodeMadeIsKeptWithoutAFetch() {
        var state = cluster()
        _ = missEverywhere(&state)
        let actions = state.claimAnswered(a, .found(made("theirs")), now: 0)
        #expect(fetches(actions) == 0)
        #expect(actions.contains { if case .answer([1], .image("theirs")) = $0 { true } else { false } })
        #expect(state.isCached(a) && state.counters.claimsWaited == 1)
        // Found in the shared tier: nothing to write back into it, nothing to release.
        #expect(!actions.contains { if case .store = $0 { true } else { false } })
    }

    @Test func aFailureAnotherNodeMetIsRememberedAsLongAsItSays() {
        var state = cluster()
        _ = missEverywhere(&state)
        let actions = state.claimAnswered(a, .failed(remaining: 7), now: 100)
        #expect(actions.contains { if case .answer([1], .placeholder) = $0 { true } else { false } })
        #expect(state.remembered(a, now: 100) == 7)
        // Not written back: the cluster already knows.
        #expect(!actions.contains { if case .storeFailure = $0 { true } else { false } })
    }

    @Test func aFailureFoundInTheSharedTierEndsTheLookup() {
        var state = cluster()
        _ = state.request(a, of: "item", waiter: (1, 1), from: .reader, now: 0)
        let actions = state.tierAnswered(a, tier: 0, .failed(remaining: 3), now: 10)
        #expect(actions.contains { if case .answer([1], .placeholder) = $0 { true } else { false } })
        #expect(state.remembered(a, now: 10) == 3 && state.counters.sharedFailures == 1)
    }

    @Test func withoutRedisTheNodeMakesItAnyway() {
        var state = cluster()
        _ = missEverywhere(&state)
        #expect(fetches(state.claimAnswered(a, .unavailable, now: 0)) == 1)
        _ = state.originalArrived(itemID: 1, .success(original), seconds: 0.1, now: 0)
        let done = state.resized(a, .success(made("x")), seconds: 0.1, now: 0)
        // Written into the tiers, no claim to release.
        #expect(done.contains { if case .store(_, _, [0, 1], nil) = $0 { true } else { false } })
        #expect(state.counters.claimsUnavailable == 1)
    }

    @Test func theWinnersFailureIsSharedAndItsClaimReleased() {
        var state = cluster()
        _ = missEverywhere(&state)
        _ = state.claimAnswered(a, .won, now: 0)
        let actions = state.originalArrived(itemID: 1, .failure(.origin), seconds: nil, now: 0)
        #expect(actions.contains { if case .storeFailure(_, let seconds, 0, true) = $0 { seconds == 5 } else { false } })
    }

    @Test func aBusyOriginReleasesTheClaimAndSharesNothing() {
        var state = cluster()
        _ = missEverywhere(&state)
        _ = state.claimAnswered(a, .won, now: 0)
        let actions = state.originalArrived(itemID: 1, .failure(.busy), seconds: nil, now: 0)
        #expect(actions.contains { if case .releaseClaim(_, 0) = $0 { true } else { false } })
        #expect(!actions.contains { if case .storeFailure = $0 { true } else { false } })
        #expect(state.remembered(a, now: 0) == nil)
    }

    @Test func aSingleServerNeverClaims() {
        var state = State(memoryBudget: 1000, lookupTiers: 1)
        _ = state.request(a, of: "item", waiter: (1, 1), from: .reader, now: 0)
        let actions = state.tierAnswered(a, tier: 0, .miss)
        #expect(claims(actions).isEmpty && fetches(actions) == 1)
    }
}
