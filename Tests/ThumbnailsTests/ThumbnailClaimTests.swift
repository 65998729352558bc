import Testing

@testable import Thumbnails
@testable import WarmfeedCore

/// Claims on fetching an original, in a cluster's shared tier, and the node
/// that owns it: decided event by event, no Redis, no threads.
@Suite struct ThumbnailClaimTests {
    typealias State = ThumbnailCacheState<String, Int, String>
    let a = ThumbnailKey(itemID: 1, variant: ThumbnailVariant(scale: 1, format: .webp))
    let a2 = ThumbnailKey(itemID: 1, variant: ThumbnailVariant(scale: 2, format: .webp))
    let original: [UInt8] = [0xff, 0xd8, 0xff]

    /// Tier 0 shared (it claims), tier 1 the disk.
    func cluster(keepsOriginals: Bool = false) -> State {
        State(memoryBudget: 1000, lookupTiers: 2, claimTier: 0, keepsOriginals: keepsOriginals)
    }

    func made(_ value: String) -> State.Made { State.Made(value: value, bytes: Array(value.utf8), cost: 10) }

    func missEverywhere(_ state: inout State, _ key: ThumbnailKey? = nil) -> [State.Action] {
        let key = key ?? a
        let waiter: (id: UInt64, waiter: Int) = (UInt64(key.variant.scale), key.variant.scale)
        _ = state.request(key, of: "item", waiter: waiter, from: .reader, now: 0)
        _ = state.tierAnswered(key, tier: 0, .miss)
        return state.tierAnswered(key, tier: 1, .miss)
    }

    func claims(_ actions: [State.Action]) -> [Int64] {
        actions.compactMap { if case .claimOriginal(let picture, 0) = $0 { picture.itemID } else { nil } }
    }

    func fetches(_ actions: [State.Action]) -> Int {
        actions.filter { if case .fetchOriginal = $0 { true } else { false } }.count
    }

    func asks(_ actions: [State.Action]) -> [ThumbnailKey] {
        actions.compactMap { if case .askOwner(let key, "http://node1:8080", _) = $0 { key } else { nil } }
    }

    @Test func aMissInEveryTierAsksForTheOriginalsClaimBeforeTheOrigin() {
        var state = cluster()
        let actions = missEverywhere(&state)
        #expect(claims(actions) == [1])
        #expect(fetches(actions) == 0)
    }

    @Test func theWinnerFetchesOwnsTheOriginalAndWritesEveryTier() {
        var state = cluster()
        _ = missEverywhere(&state)
        #expect(fetches(state.originalClaimAnswered(picture: 1, .won, now: 0)) == 1)
        let arrived = state.originalArrived(picture: 1, .success(original), seconds: 0.1, now: 0)
        #expect(arrived.contains { if case .keepOriginal(1, _, 0) = $0 { true } else { false } })
        let done = state.resized(a, .success(made("x")), seconds: 0.1, now: 0)
        #expect(done.contains { if case .store(_, _, [0, 1]) = $0 { true } else { false } })
        #expect(state.counters.claimsWon == 1 && state.counters.resizes == 1)
    }

    /// A variant asked for after the original arrived, while its disk write and
    /// owner record are still on their way, and after memory let it go: made
    /// from the bytes being kept, not from a disk read that would miss and a
    /// claim that would find this node's own record and fetch it again.
    @Test func aVariantAskedForWhileItsOriginalIsBeingKeptNeedsNoSecondFetch() {
        // Memory for originals too small for this one: only the bytes being kept hold it.
        var state = State(memoryBudget: 1000, originalsBudget: 16, lookupTiers: 2, claimTier: 0, keepsOriginals: true)
        let large = [UInt8](repeating: 7, count: 64)
        _ = missEverywhere(&state, a)
        _ = state.originalRead(picture: 1, nil, now: 0)
        #expect(fetches(state.originalClaimAnswered(picture: 1, .won, now: 0)) == 1)
        _ = state.originalArrived(picture: 1, .success(large), seconds: 0.1, now: 0)
        _ = state.resized(a, .success(made("x")), seconds: 0.1, now: 0)
        let avif = ThumbnailKey(itemID: 1, variant: ThumbnailVariant(scale: 1, format: .avif))
        let during = missEverywhere(&state, avif)
        #expect(during.contains { if case .resize(avif, large, _) = $0 { true } else { false } })
        #expect(!during.contains { if case .readOriginal = $0 { true } else { false } })
        #expect(claims(during).isEmpty && fetches(during) == 0)
        // Kept: a later variant reads it from disk, as every variant after it does.
        _ = state.resized(avif, .success(made("y")), seconds: 0.1, now: 0)
        #expect(state.originalKept(picture: 1).isEmpty)
        let after = missEverywhere(&state, a2)
        #expect(after.contains { if case .readOriginal(1) = $0 { true } else { false } })
        #expect(state.usage.originalBytes == 0)
    }

    /// Two variants of one item missed together: one claim, one fetch, two resizes.
    @Test func bothSizesOfAnItemShareOneClaimAndOneFetch() {
        var state = cluster()
        let first = missEverywhere(&state, a)
        let second = missEverywhere(&state, a2)
        #expect(claims(first) == [1] && claims(second).isEmpty)
        #expect(fetches(state.originalClaimAnswered(picture: 1, .won, now: 0)) == 1)
        let arrived = state.originalArrived(picture: 1, .success(original), seconds: 0.1, now: 0)
        #expect(arrived.filter { if case .resize = $0 { true } else { false } }.count == 2)
    }

    /// Another node owns the original: each variant is asked of it, none fetched here.
    @Test func anOriginalAnotherNodeOwnsIsMadeThereForEveryVariant() {
        var state = cluster()
        _ = missEverywhere(&state, a)
        _ = missEverywhere(&state, a2)
        let actions = state.originalClaimAnswered(picture: 1, .owner("http://node1:8080"), now: 0)
        #expect(fetches(actions) == 0)
        #expect(Set(asks(actions)) == [a, a2])
        let answered = state.ownerAnswered(a2, owner: "http://node1:8080", .made(made("theirs")), now: 0)
        #expect(answered.contains { if case .answer([2], .image("theirs")) = $0 { true } else { false } })
        // The owner wrote the shared tier; this node's disk gets it.
        #expect(answered.contains { if case .store(_, _, [1]) = $0 { true } else { false } })
        #expect(state.isCached(a2) && state.counters.claimsWaited == 1 && state.counters.ownerAsks == 2)
        #expect(state.counters.resizes == 0 && state.counters.originFetches == 0)
    }

    /// An owner that does not answer is forgotten, and this node fetches the original itself.
    @Test func anOwnerThatDoesNotAnswerIsForgottenAndTheOriginalFetchedHere() {
        var state = cluster()
        _ = missEverywhere(&state)
        _ = state.originalClaimAnswered(picture: 1, .owner("http://node1:8080"), now: 0)
        let gone = state.ownerAnswered(a, owner: "http://node1:8080", .unreachable, now: 0)
        #expect(gone.contains { if case .forgetOwner(1, "http://node1:8080", 0) = $0 { true } else { false } })
        #expect(claims(gone) == [1])
        // Still named (another node wrote it back meanwhile): not asked again, fetched here.
        #expect(fetches(state.originalClaimAnswered(picture: 1, .owner("http://node1:8080"), now: 0)) == 1)
        #expect(state.counters.ownerUnreachable == 1)
    }

    @Test func aFailureAnotherNodeMetIsRememberedAsLongAsItSays() {
        var state = cluster()
        _ = missEverywhere(&state)
        let actions = state.originalClaimAnswered(picture: 1, .failed(remaining: 7), now: 100)
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

    @Test func withoutRedisTheNodeFetchesAnyway() {
        var state = cluster()
        _ = missEverywhere(&state)
        #expect(fetches(state.originalClaimAnswered(picture: 1, .unavailable, now: 0)) == 1)
        let arrived = state.originalArrived(picture: 1, .success(original), seconds: 0.1, now: 0)
        // Kept, but owned nowhere: no claim was held.
        #expect(arrived.contains { if case .keepOriginal(1, _, nil) = $0 { true } else { false } })
        let done = state.resized(a, .success(made("x")), seconds: 0.1, now: 0)
        #expect(done.contains { if case .store(_, _, [0, 1]) = $0 { true } else { false } })
        #expect(state.counters.claimsUnavailable == 1)
    }

    @Test func theWinnersFailureIsSharedAndItsClaimReleased() {
        var state = cluster()
        _ = missEverywhere(&state)
        _ = state.originalClaimAnswered(picture: 1, .won, now: 0)
        let actions = state.originalArrived(picture: 1, .failure(.origin), seconds: nil, now: 0)
        #expect(actions.contains { if case .originalFailed(1, let seconds, 0) = $0 { seconds == 5 } else { false } })
        #expect(actions.contains { if case .storeFailure(_, 5, 0) = $0 { true } else { false } })
    }

    @Test func aBusyOriginReleasesTheClaimAndSharesNothing() {
        var state = cluster()
        _ = missEverywhere(&state)
        _ = state.originalClaimAnswered(picture: 1, .won, now: 0)
        let actions = state.originalArrived(picture: 1, .failure(.busy), seconds: nil, now: 0)
        #expect(actions.contains { if case .releaseOriginalClaim(1, 0) = $0 { true } else { false } })
        #expect(!actions.contains { if case .storeFailure = $0 { true } else { false } })
        #expect(!actions.contains { if case .originalFailed = $0 { true } else { false } })
        #expect(state.remembered(a, now: 0) == nil)
    }

    /// With originals kept on disk, the disk is read before any claim or fetch.
    @Test func anOriginalKeptOnDiskNeedsNoClaimAndNoFetch() {
        var state = cluster(keepsOriginals: true)
        let missed = missEverywhere(&state)
        #expect(missed.contains { if case .readOriginal(1) = $0 { true } else { false } })
        #expect(claims(missed).isEmpty && fetches(missed) == 0)
        let read = state.originalRead(picture: 1, original, now: 0)
        #expect(read.contains { if case .resize(_, _, true) = $0 { true } else { false } })
        #expect(state.counters.originalsFromDisk == 1)
        // Not there: on to the claim.
        _ = missEverywhere(&state, ThumbnailKey(itemID: 2, variant: a.variant))
        #expect(claims(state.originalRead(picture: 2, nil, now: 0)) == [2])
    }

    /// An original queued behind this node's own resizes is not claimed until
    /// it could be fetched: another node with room must not wait on this one.
    @Test func aNodeClaimsAnOriginalOnlyWhenItCanFetchItAtOnce() {
        var state = State(memoryBudget: 1000, originalsBudget: 2000, lookupTiers: 2, claimTier: 0)
        let big = [UInt8](repeating: 1, count: 1500)
        _ = missEverywhere(&state)
        _ = state.originalClaimAnswered(picture: 1, .won, now: 0)
        // Item 1's original waits for libvips and fills the pipeline's half of the budget.
        _ = state.originalArrived(picture: 1, .success(big), seconds: 0.1, now: 0)
        let b = ThumbnailKey(itemID: 2, variant: a.variant)
        let queued = missEverywhere(&state, b)
        #expect(claims(queued).isEmpty && fetches(queued) == 0, "queued here: no claim held meanwhile")
        // The resize ends: now it is claimed, then fetched.
        let freed = state.resized(a, .success(made("x")), seconds: 0.1, now: 0)
        #expect(claims(freed) == [2] && fetches(freed) == 0)
        #expect(fetches(state.originalClaimAnswered(picture: 2, .won, now: 0)) == 1)
    }

    @Test func aSingleServerNeverClaims() {
        var state = State(memoryBudget: 1000, lookupTiers: 1)
        _ = state.request(a, of: "item", waiter: (1, 1), from: .reader, now: 0)
        let actions = state.tierAnswered(a, tier: 0, .miss)
        #expect(claims(actions).isEmpty && fetches(actions) == 1)
    }
}
