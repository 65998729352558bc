import Testing

@testable import Thumbnails
@testable import WarmfeedCore

/// A reader's request comes without its item: the item is read only once
/// every tier has missed, before the claim and the origin. Decided event by
/// event, no store, no threads.
@Suite struct ThumbnailItemReadTests {
    typealias State = ThumbnailCacheState<String, Int, String>
    let a = ThumbnailKey(itemID: 1, variant: ThumbnailVariant(scale: 1, format: .webp))
    let a2 = ThumbnailKey(itemID: 1, variant: ThumbnailVariant(scale: 2, format: .webp))

    func made(_ value: String) -> State.Made { State.Made(value: value, bytes: Array(value.utf8), cost: 10) }

    func reads(_ actions: [State.Action]) -> [ThumbnailKey] {
        actions.compactMap { if case .readItem(let key) = $0 { key } else { nil } }
    }

    func fetched(_ actions: [State.Action]) -> [String] {
        actions.compactMap { if case .fetchOriginal(_, let item, _) = $0 { item } else { nil } }
    }

    func claims(_ actions: [State.Action]) -> Int {
        actions.filter { if case .claimOriginal = $0 { true } else { false } }.count
    }

    func answers(_ actions: [State.Action]) -> [String] {
        actions.flatMap { action -> [String] in
            guard case .answer(let waiters, let answer) = action else { return [] }
            let word =
                switch answer {
                case .image(let value): value
                case .placeholder: "placeholder"
                case .released: "released"
                case .noSuchItem: "no such item"
                }
            return waiters.map { "\($0): \(word)" }
        }
    }

    @Test func aThumbnailATierHasNeedsNoItem() {
        var state = State(memoryBudget: 1000, lookupTiers: 2, claimTier: 0)
        let (decision, first) = state.request(a, of: nil, waiter: (1, 1), from: .reader, now: 0)
        #expect(decision == .started && reads(first).isEmpty)
        #expect(reads(state.tierAnswered(a, tier: 0, .miss)).isEmpty)
        let actions = state.tierAnswered(a, tier: 1, .hit(made("from disk")))
        #expect(reads(actions).isEmpty)
        #expect(answers(actions) == ["1: from disk"])
    }

    @Test func everyTierMissedTheItemIsReadThenFetched() {
        var state = State(memoryBudget: 1000, lookupTiers: 1)
        _ = state.request(a, of: nil, waiter: (1, 1), from: .reader, now: 0)
        let missed = state.tierAnswered(a, tier: 0, .miss)
        #expect(reads(missed) == [a])
        #expect(fetched(missed).isEmpty)
        // A second reader joins while the item is read: one read, one fetch.
        let (decision, joined) = state.request(a, of: nil, waiter: (2, 2), from: .reader, now: 0)
        #expect(decision == .joined && joined.isEmpty)
        #expect(fetched(state.itemRead(a, .found("item 1"))) == ["item 1"])
        #expect(state.itemRead(a, .found("again")).isEmpty, "an answer for a job past that stage is ignored")
        _ = state.originalArrived(picture: 1, .success([1, 2, 3]), seconds: 0.1, now: 0)
        let done = state.resized(a, .success(made("made")), seconds: 0.1, now: 0)
        #expect(Set(answers(done)) == ["1: made", "2: made"])
    }

    @Test func inAClusterTheItemIsReadBeforeTheClaim() {
        var state = State(memoryBudget: 1000, lookupTiers: 2, claimTier: 0)
        _ = state.request(a, of: nil, waiter: (1, 1), from: .reader, now: 0)
        _ = state.tierAnswered(a, tier: 0, .miss)
        let missed = state.tierAnswered(a, tier: 1, .miss)
        #expect(reads(missed) == [a] && claims(missed) == 0)
        let read = state.itemRead(a, .found("item 1"))
        #expect(claims(read) == 1 && fetched(read).isEmpty)
        #expect(fetched(state.originalClaimAnswered(picture: 1, .won, now: 0)) == ["item 1"])
    }

    @Test func noSuchItemAnswersEveryWaiterAndRemembersNothing() {
        var state = State(memoryBudget: 1000, lookupTiers: 2, claimTier: 0)
        _ = state.request(a, of: nil, waiter: (1, 1), from: .reader, now: 0)
        _ = state.request(a, of: nil, waiter: (2, 2), from: .reader, now: 0)
        _ = state.tierAnswered(a, tier: 0, .miss)
        _ = state.tierAnswered(a, tier: 1, .miss)
        let actions = state.itemRead(a, .noSuchItem)
        #expect(Set(answers(actions)) == ["1: no such item", "2: no such item"])
        // No claim was taken, so none is released; nothing is stored or remembered.
        #expect(actions.count == 1)
        #expect(state.usage.negative == 0 && state.usage.inFlight == 0)
        // The next request starts over (the item may have been imported since).
        #expect(state.request(a, of: nil, waiter: (3, 3), from: .reader, now: 1).decision == .started)
    }

    @Test func aStoreThatDoesNotAnswerGetsThePlaceholderUnremembered() {
        var state = State(memoryBudget: 1000, lookupTiers: 1)
        _ = state.request(a, of: nil, waiter: (1, 1), from: .reader, now: 0)
        _ = state.tierAnswered(a, tier: 0, .miss)
        #expect(answers(state.itemRead(a, .placeholder)) == ["1: placeholder"])
        #expect(state.usage.negative == 0 && state.usage.inFlight == 0)
        #expect(state.counters.originFetches == 0)
    }

    @Test func preWarmBringsItsItemAndIsNeverRead() {
        var state = State(memoryBudget: 1000, lookupTiers: 1)
        _ = state.request(a, of: "item 1", waiter: nil, from: .prewarm, now: 0)
        let missed = state.tierAnswered(a, tier: 0, .miss)
        #expect(reads(missed).isEmpty)
        #expect(fetched(missed) == ["item 1"])
    }

    @Test func aReaderJoiningPreWarmsFetchIsPromotedWithPreWarmsItem() {
        var state = State(memoryBudget: 1000, lookupTiers: 1)
        _ = state.request(a, of: "item 1", waiter: nil, from: .prewarm, now: 0)
        _ = state.tierAnswered(a, tier: 0, .miss)
        let (_, joined) = state.request(a, of: nil, waiter: (1, 1), from: .reader, now: 0)
        let promoted = joined.compactMap { if case .promoteFetch(_, let item) = $0 { item } else { nil } }
        #expect(promoted == ["item 1"])
    }

    @Test func theOtherVariantOfAnItemBeingFetchedReadsItsOwnItemThenShares() {
        var state = State(memoryBudget: 1000, lookupTiers: 1)
        _ = state.request(a, of: nil, waiter: (1, 1), from: .reader, now: 0)
        _ = state.tierAnswered(a, tier: 0, .miss)
        #expect(fetched(state.itemRead(a, .found("item 1"))) == ["item 1"])
        _ = state.request(a2, of: nil, waiter: (2, 2), from: .reader, now: 0)
        #expect(reads(state.tierAnswered(a2, tier: 0, .miss)) == [a2])
        // The original is already on its way: the 2x waits for it rather than fetch again.
        #expect(fetched(state.itemRead(a2, .found("item 1"))).isEmpty)
        let arrived = state.originalArrived(picture: 1, .success([1, 2, 3]), seconds: 0.1, now: 0)
        #expect(arrived.filter { if case .resize = $0 { true } else { false } }.count == 2)
    }
}
