import Testing

@testable import Thumbnails
@testable import WarmfeedCore

/// The thumbnail cache's state machine, driven event by event: no threads, no
/// sockets, no clock. Races the socket tests reach only by luck are replayed
/// here in a fixed order.
@Suite struct ThumbnailCacheStateTests {
    typealias State = ThumbnailCacheState<String, Int, String>
    let a = ThumbnailKey(itemID: 1, variant: ThumbnailVariant(scale: 1, format: .webp))
    let b = ThumbnailKey(itemID: 2, variant: ThumbnailVariant(scale: 1, format: .webp))
    let c = ThumbnailKey(itemID: 3, variant: ThumbnailVariant(scale: 2, format: .jpeg))
    let a2 = ThumbnailKey(itemID: 1, variant: ThumbnailVariant(scale: 2, format: .webp))
    let original: [UInt8] = [0xff, 0xd8, 0xff]

    // MARK: Reading actions

    func answered(_ actions: [State.Action]) -> [Int: String] {
        var answers: [Int: String] = [:]
        for case .answer(let waiters, let answer) in actions {
            for waiter in waiters {
                switch answer {
                case .image(let value): answers[waiter] = value
                case .placeholder: answers[waiter] = "placeholder"
                case .released: answers[waiter] = "released"
                case .noSuchItem: answers[waiter] = "no such item"
                }
            }
        }
        return answers
    }

    func fetches(_ actions: [State.Action]) -> [Int64] {
        actions.compactMap { if case .fetchOriginal(let picture, _, _) = $0 { picture.itemID } else { nil } }
    }

    func resizes(_ actions: [State.Action]) -> [ThumbnailKey] {
        actions.compactMap { if case .resize(let key, _, _) = $0 { key } else { nil } }
    }

    func lookUps(_ actions: [State.Action]) -> [Int] {
        actions.compactMap { if case .lookUp(_, let tier) = $0 { tier } else { nil } }
    }

    func stores(_ actions: [State.Action]) -> [[Int]] {
        actions.compactMap { if case .store(_, _, let tiers) = $0 { tiers } else { nil } }
    }

    func made(_ value: String, cost: Int = 10) -> State.Made { State.Made(value: value, bytes: Array(value.utf8), cost: cost) }

    @discardableResult
    func ask(_ state: inout State, _ key: ThumbnailKey, waiter: Int?, from asker: State.Asker = .reader, now: Double = 0) -> (State.Decision, [State.Action]) {
        let (decision, actions) = state.request(key, of: "item \(key.itemID)", waiter: waiter.map { (UInt64($0), $0) }, from: asker, now: now)
        return (decision, actions)
    }

    /// Runs a started job through a disk miss, the original's fetch and the
    /// resize; returns the actions of the resize's end.
    func make(_ state: inout State, _ key: ThumbnailKey, value: String, cost: Int = 10, now: Double = 0) -> [State.Action] {
        #expect(fetches(state.tierAnswered(key, tier: 0, found: nil)) == [key.itemID])
        #expect(resizes(state.originalArrived(picture: key.picture, .success(original), seconds: 0.25, now: now)) == [key])
        return state.resized(key, .success(made(value, cost: cost)), seconds: 0.05, now: now)
    }

    // MARK: The behaviour the cache always had

    @Test func concurrentRequestsShareOneJob() {
        var state = State(memoryBudget: 1000)
        let (decision, actions) = ask(&state, a, waiter: 1)
        #expect(decision == .started && lookUps(actions) == [0])
        #expect(ask(&state, a, waiter: 2).0 == .joined)
        #expect(ask(&state, a, waiter: nil).0 == .joined)
        #expect(ask(&state, a, waiter: 3).0 == .joined)
        #expect(state.isInFlight(a))
        #expect(answered(make(&state, a, value: "thumb")) == [1: "thumb", 2: "thumb", 3: "thumb"])
        #expect(!state.isInFlight(a))
        let (hit, served) = ask(&state, a, waiter: 4, now: 1)
        #expect(hit == .hit && answered(served) == [4: "thumb"])
        #expect(state.counters.misses == 1 && state.counters.coalesced == 3 && state.counters.hits == 1)
    }

    @Test func prewarmRequestsDoNotCountAsReadersHitsOrMisses() {
        var state = State(memoryBudget: 1000)
        #expect(ask(&state, a, waiter: 9, from: .prewarm).0 == .started)
        #expect(answered(make(&state, a, value: "warm")) == [9: "warm"])
        ask(&state, a, waiter: nil, from: .prewarm)
        #expect(state.counters.hits == 0 && state.counters.misses == 0 && state.counters.prewarmStarts == 1)
        let (hit, served) = ask(&state, a, waiter: 10)
        #expect(hit == .hit && answered(served) == [10: "warm"])
        #expect(state.counters.hits == 1)
    }

    @Test func aPrewarmJobIsJoinedByAReader() {
        var state = State(memoryBudget: 1000)
        #expect(ask(&state, a, waiter: nil, from: .prewarm).0 == .started)
        #expect(ask(&state, a, waiter: 7).0 == .joined)  // the reader arrives while pre-warm makes it
        #expect(answered(make(&state, a, value: "x")) == [7: "x"])
    }

    @Test func aReaderJoiningAPrewarmFetchPromotesItOnce() {
        var state = State(memoryBudget: 1000)
        ask(&state, a, waiter: nil, from: .prewarm)
        #expect(fetches(state.tierAnswered(a, tier: 0, found: nil)) == [a.itemID], "not on disk: pre-warm's fetch")
        let promoted = { (actions: [State.Action]) in actions.compactMap { if case .promoteFetch(let picture, _) = $0 { picture.itemID } else { nil } } }
        let (decision, actions) = ask(&state, a, waiter: 7)
        #expect(decision == .joined && promoted(actions) == [a.itemID], "the fetch a reader now waits on goes first")
        #expect(promoted(ask(&state, a, waiter: 8).1).isEmpty, "promoted once")
        let urgent = state.fetchIsUrgent(picture: a.picture)
        #expect(urgent)
    }

    /// A reader who takes only AVIF waits at pre-warm's pace: its job is not
    /// urgent, and joining pre-warm's job raises nothing; it counts as a reader.
    @Test func aPatientReaderNeitherStartsNorRaisesUrgentWork() {
        var state = State(memoryBudget: 1000)
        let (started, _) = ask(&state, a, waiter: 3, from: .patientReader)
        #expect(started == .started && state.counters.misses == 1)
        #expect(fetches(state.tierAnswered(a, tier: 0, found: nil)) == [a.itemID])
        #expect(!state.fetchIsUrgent(picture: a.picture), "its fetch waits behind readers'")
        ask(&state, b, waiter: nil, from: .prewarm)
        _ = state.tierAnswered(b, tier: 0, found: nil)
        let (joined, actions) = ask(&state, b, waiter: 4, from: .patientReader)
        #expect(joined == .joined && actions.isEmpty && state.counters.coalesced == 1)
        #expect(!state.fetchIsUrgent(picture: b.picture))
        #expect(resizes(state.originalArrived(picture: b.picture, .success(original), seconds: 0.1, now: 0)) == [b])
        #expect(answered(state.resized(b, .success(made("y", cost: 10)), seconds: 0.05, now: 0)) == [4: "y"], "it is answered when the job ends")
    }

    @Test func aReaderJoiningAPrewarmResizePromotesIt() {
        var state = State(memoryBudget: 1000)
        ask(&state, a, waiter: nil, from: .prewarm)
        _ = state.tierAnswered(a, tier: 0, found: nil)
        let resize = state.originalArrived(picture: a.picture, .success([1, 2, 3]), seconds: 0.1, now: 0)
        #expect(resizes(resize) == [a])
        let (_, actions) = ask(&state, a, waiter: 7)
        #expect(actions.contains { if case .promoteResize(let key) = $0 { key == a } else { false } })
    }

    @Test func prewarmWaitsOnlyOnTheJobsItStarts() {
        var state = State(memoryBudget: 1000)
        ask(&state, a, waiter: 1)
        let (decision, actions) = ask(&state, a, waiter: 2, from: .prewarm)
        #expect(decision == .joined && answered(actions) == [2: "released"])
        #expect(answered(make(&state, a, value: "x")) == [1: "x"])
    }

    @Test func memoryIsBoundedByBytesLeastRecentlyUsedFirst() {
        var state = State(memoryBudget: 100)
        for key in [a, b] {
            ask(&state, key, waiter: nil)
            _ = make(&state, key, value: "v\(key.itemID)", cost: 40)
        }
        ask(&state, a, waiter: nil, now: 1)  // a is now the most recent
        ask(&state, c, waiter: nil, now: 1)
        let actions = make(&state, c, value: "v3", cost: 40)
        #expect(state.isCached(a) && state.isCached(c) && !state.isCached(b))
        #expect(state.counters.evictions == 1)
        #expect(actions.contains { if case .release(let values) = $0 { values == ["v2"] } else { false } })
        #expect(state.usage.bytes == 80 && state.usage.budget == 100)
    }

    @Test func failuresAreRememberedForTheTTLThenRetried() {
        var state = State(memoryBudget: 100, negativeTTL: 30, firstNegativeTTL: 30)
        ask(&state, a, waiter: 1, now: 100)
        #expect(ask(&state, a, waiter: 2, now: 100).0 == .joined)
        _ = state.tierAnswered(a, tier: 0, found: nil)
        let failed = state.originalArrived(picture: 1, .failure(.origin), seconds: nil, now: 101)
        #expect(answered(failed) == [1: "placeholder", 2: "placeholder"])
        for now in [101.0, 110, 130.9] {
            let (decision, actions) = ask(&state, a, waiter: 3, now: now)
            #expect(decision == .failedRecently && answered(actions) == [3: "placeholder"], "at \(now) the failure should still be remembered")
        }
        #expect(ask(&state, a, waiter: 4, now: 131.5).0 == .started)
        #expect(state.counters.negativeHits == 3 && state.counters.failures == 1)
        #expect(state.counters.originFetches == 1 && state.counters.originErrors == 1)
        _ = make(&state, a, value: "ok", now: 132)
        #expect(ask(&state, a, waiter: 5, now: 132).0 == .hit)
    }

    @Test func theNegativeCacheIsBounded() {
        var state = State(memoryBudget: 100, negativeTTL: 30, firstNegativeTTL: 30, negativeCapacity: 3)
        for id in 1...10 {
            let key = ThumbnailKey(itemID: Int64(id), variant: ThumbnailVariant(scale: 1, format: .webp))
            ask(&state, key, waiter: nil, now: Double(id))
            _ = state.tierAnswered(key, tier: 0, found: nil)
            _ = state.originalArrived(picture: Picture(itemID: Int64(id), tag: 0), .failure(.origin), seconds: nil, now: Double(id))
        }
        #expect(state.usage.negative == 3)
        // The newest failures are the ones kept.
        let newest = ThumbnailKey(itemID: 10, variant: ThumbnailVariant(scale: 1, format: .webp))
        #expect(ask(&state, newest, waiter: nil, now: 11).0 == .failedRecently)
    }

    @Test func aCancelledWaiterIsHandedBackAndTheJobGoesOnRememberingNoFailure() {
        var state = State(memoryBudget: 100)
        ask(&state, a, waiter: 5)
        // Asked of another key, the waiter is not found: only its own job is looked at.
        #expect(state.cancel(waiter: 5, of: b).isEmpty && state.counters.cancelledWaiters == 0)
        #expect(answered(state.cancel(waiter: 5, of: a)) == [5: "released"])
        #expect(state.isInFlight(a) && state.counters.cancelledWaiters == 1)
        #expect(answered(make(&state, a, value: "kept")).isEmpty)
        #expect(state.isCached(a) && state.counters.failures == 0)
        #expect(state.cancel(waiter: 5, of: a).isEmpty)  // a second cancel finds nothing
    }

    @Test func aTooLargeThumbnailIsServedButNotKept() {
        var state = State(memoryBudget: 10)
        ask(&state, a, waiter: 1)
        #expect(answered(make(&state, a, value: "huge", cost: 11)) == [1: "huge"])
        #expect(!state.isCached(a))
    }

    // MARK: Tiers, originals, and the races

    @Test func tiersAreAskedInOrderAndAHitIsCopiedIntoTheTiersAbove() {
        var state = State(memoryBudget: 1000, lookupTiers: 2)
        #expect(lookUps(ask(&state, a, waiter: 1).1) == [0])
        #expect(lookUps(state.tierAnswered(a, tier: 0, found: nil)) == [1])
        let actions = state.tierAnswered(a, tier: 1, found: made("from tier 1"))
        #expect(answered(actions) == [1: "from tier 1"])
        #expect(stores(actions) == [[0]])
        #expect(fetches(actions).isEmpty && state.isCached(a))
        #expect(state.counters.tierHits == [0, 1] && state.counters.originFetches == 0)
    }

    @Test func aThumbnailMadeFromTheOriginIsStoredIntoEveryTier() {
        var state = State(memoryBudget: 1000, lookupTiers: 2)
        ask(&state, a, waiter: 1)
        _ = state.tierAnswered(a, tier: 0, found: nil)
        #expect(fetches(state.tierAnswered(a, tier: 1, found: nil)) == [1])
        _ = state.originalArrived(picture: 1, .success(original), seconds: 0.2, now: 0)
        #expect(stores(state.resized(a, .success(made("x")), seconds: 0.1, now: 0)) == [[0, 1]])
        #expect(state.originLatency.total == 1 && state.thumbnailLatency.total == 1)
    }

    @Test func the1xAnd2xOfOneItemAskedAtOnceShareOneFetch() {
        var state = State(memoryBudget: 1000)
        ask(&state, a, waiter: 1)
        ask(&state, a2, waiter: 2)
        #expect(fetches(state.tierAnswered(a, tier: 0, found: nil)) == [1])
        #expect(fetches(state.tierAnswered(a2, tier: 0, found: nil)).isEmpty)  // joins the fetch in flight
        let arrived = state.originalArrived(picture: 1, .success(original), seconds: 0.2, now: 0)
        #expect(Set(resizes(arrived)) == [a, a2])
        #expect(answered(state.resized(a2, .success(made("2x")), seconds: 0.1, now: 0)) == [2: "2x"])
        #expect(answered(state.resized(a, .success(made("1x")), seconds: 0.1, now: 0)) == [1: "1x"])
        #expect(state.counters.originFetches == 1)
    }

    @Test func aLaterVariantFindsTheOriginalKept() {
        var state = State(memoryBudget: 1000)
        ask(&state, a, waiter: 1)
        _ = make(&state, a, value: "1x")
        ask(&state, a2, waiter: 2)
        let actions = state.tierAnswered(a2, tier: 0, found: nil)
        #expect(fetches(actions).isEmpty && resizes(actions) == [a2])
        #expect(state.counters.originalReuses == 1 && state.counters.originFetches == 1)
    }

    @Test func anOriginFailureWhileOthersJoinAnswersEveryoneAndIsRemembered() {
        var state = State(memoryBudget: 1000, negativeTTL: 10)
        ask(&state, a, waiter: 1)
        _ = state.tierAnswered(a, tier: 0, found: nil)
        ask(&state, a, waiter: 2)  // joins while the original is fetched
        ask(&state, a2, waiter: 3)
        _ = state.tierAnswered(a2, tier: 0, found: nil)  // the 2x waits on the same fetch
        ask(&state, a2, waiter: 4)
        let failed = state.originalArrived(picture: 1, .failure(.origin), seconds: nil, now: 5)
        #expect(answered(failed) == [1: "placeholder", 2: "placeholder", 3: "placeholder", 4: "placeholder"])
        #expect(state.counters.failures == 2 && state.usage.inFlight == 0)
        #expect(ask(&state, a, waiter: 5, now: 6).0 == .failedRecently)
        #expect(ask(&state, a2, waiter: 6, now: 6).0 == .failedRecently)
    }

    @Test func aWaiterCancelledWhileItsResizeRunsIsReleasedOnceAndTheOthersGetTheThumbnail() {
        var state = State(memoryBudget: 1000)
        ask(&state, a, waiter: 1)
        ask(&state, a, waiter: 2)
        _ = state.tierAnswered(a, tier: 0, found: nil)
        #expect(resizes(state.originalArrived(picture: 1, .success(original), seconds: 0.2, now: 0)) == [a])
        #expect(answered(state.cancel(waiter: 1, of: a)) == [1: "released"])
        #expect(answered(state.resized(a, .success(made("x")), seconds: 0.1, now: 0)) == [2: "x"])
        #expect(state.isCached(a))
    }

    @Test func anImageThatCannotBeResizedIsAFailure() {
        var state = State(memoryBudget: 1000)
        ask(&state, a, waiter: 1)
        _ = state.tierAnswered(a, tier: 0, found: nil)
        _ = state.originalArrived(picture: 1, .success(original), seconds: 0.2, now: 0)
        #expect(answered(state.resized(a, .failure(.image), seconds: nil, now: 0)) == [1: "placeholder"])
        #expect(state.counters.failures == 1 && state.counters.originErrors == 0)
    }

    @Test func anItemWithNoSourceFailsWithoutCountingAnOriginFetch() {
        var state = State(memoryBudget: 1000)
        ask(&state, a, waiter: 1)
        _ = state.tierAnswered(a, tier: 0, found: nil)
        #expect(answered(state.originalArrived(picture: 1, .failure(.noSource), seconds: nil, now: 0)) == [1: "placeholder"])
        #expect(state.counters.originFetches == 0 && state.counters.failures == 1)
    }

    @Test func eventsForAJobInAnotherStageAreIgnored() {
        var state = State(memoryBudget: 1000)
        #expect(state.tierAnswered(a, tier: 0, found: made("stray")).isEmpty)  // no job at all
        ask(&state, a, waiter: 1)
        #expect(state.resized(a, .success(made("early")), seconds: 0, now: 0).isEmpty)  // not resizing yet
        #expect(state.tierAnswered(a, tier: 3, found: nil).isEmpty)  // not that tier
        #expect(!state.isCached(a) && state.isInFlight(a))
    }

    // MARK: A busy origin is not a failed one

    func failOrigin(_ state: inout State, _ key: ThumbnailKey, _ failure: State.Failure, now: Double) -> [State.Action] {
        ask(&state, key, waiter: 1, now: now)
        _ = state.tierAnswered(key, tier: 0, found: nil)
        return state.originalArrived(picture: key.picture, .failure(failure), seconds: nil, now: now)
    }

    @Test func aBusyOriginGivesThePlaceholderButIsNotRemembered() {
        var state = State(memoryBudget: 100)
        #expect(answered(failOrigin(&state, a, .busy, now: 0)) == [1: "placeholder"])
        #expect(state.counters.busy == 1 && state.counters.failures == 0 && state.counters.originErrors == 0)
        #expect(state.remembered(a, now: 0) == nil)
        #expect(ask(&state, a, waiter: 2, now: 0.1).0 == .started, "asked again at once")
    }

    @Test func repeatedFailuresAreRememberedLongerUpToTheCap() {
        var state = State(memoryBudget: 100, negativeTTL: 30, firstNegativeTTL: 5)
        var now = 0.0
        var remembered: [Double] = []
        for _ in 0..<5 {
            _ = failOrigin(&state, a, .origin, now: now)
            remembered.append(state.remembered(a, now: now) ?? 0)
            now += remembered.last! + 0.1  // asked again just after it is forgotten
        }
        #expect(remembered.map { ($0 * 1000).rounded() / 1000 } == [5, 10, 20, 30, 30])
    }

    @Test func aSuccessStartsTheCountAgain() {
        // Memory and the originals keep nothing, so each request goes to the origin.
        var state = State(memoryBudget: 0, originalsBudget: 0, negativeTTL: 30, firstNegativeTTL: 5)
        _ = failOrigin(&state, a, .origin, now: 0)
        _ = failOrigin(&state, a, .origin, now: 6)
        #expect(state.remembered(a, now: 6) == 10)
        ask(&state, a, waiter: 2, now: 16.5)
        _ = make(&state, a, value: "back", now: 16.5)
        #expect(state.remembered(a, now: 16.5) == nil)
        _ = failOrigin(&state, a, .origin, now: 17)
        #expect(state.remembered(a, now: 17) == 5)
    }

    // MARK: Originals waiting for libvips are bounded

    func key(_ item: Int64) -> ThumbnailKey { ThumbnailKey(itemID: item, variant: ThumbnailVariant(scale: 1, format: .webp)) }

    /// Starts a job for `item` and reports a disk miss; answers the fetches that started.
    func miss(_ state: inout State, _ item: Int64, from asker: State.Asker) -> [Int64] {
        ask(&state, key(item), waiter: asker == .reader ? Int(item) : nil, from: asker)
        return fetches(state.tierAnswered(key(item), tier: 0, found: nil))
    }

    @Test func originalsWaitingForLibvipsHoldBackNewFetchesReadersFirst() {
        // 2,000 bytes of originals: 1,000 kept, 1,000 waiting for libvips.
        var state = State(memoryBudget: 100_000, originalsBudget: 2000)
        #expect(state.resizingBudget == 1000)
        let heavy = [UInt8](repeating: 0xff, count: 400)
        for item: Int64 in 1...3 { #expect(miss(&state, item, from: .prewarm) == [item]) }
        for item: Int64 in 1...3 {
            #expect(resizes(state.originalArrived(picture: Picture(itemID: item, tag: 0), .success(heavy), seconds: 0.01, now: 0)) == [key(item)])
        }
        #expect(state.waitingForResize.bytes == 1200)
        // The waiting half is full: new fetches wait, whoever asks.
        #expect(miss(&state, 4, from: .prewarm) == [])
        #expect(miss(&state, 5, from: .reader) == [])
        #expect(miss(&state, 6, from: .prewarm) == [])
        #expect(state.waitingForResize.deferredFetches == 3)
        // A reader joins pre-warm's item 6: it now goes ahead of item 4.
        #expect(ask(&state, key(6), waiter: 60).0 == .joined)
        // One resize ends: 800 bytes wait, and one 400-byte original on its way would fill the half again.
        #expect(fetches(state.resized(key(1), .success(made("t1")), seconds: 0.01, now: 0)) == [5])
        #expect(fetches(state.resized(key(2), .success(made("t2")), seconds: 0.01, now: 0)) == [6])
        #expect(resizes(state.originalArrived(picture: 5, .success(heavy), seconds: 0.01, now: 0)) == [key(5)])
        #expect(resizes(state.originalArrived(picture: 6, .success(heavy), seconds: 0.01, now: 0)) == [key(6)])
        #expect(fetches(state.resized(key(3), .success(made("t3")), seconds: 0.01, now: 0)) == [4])
        #expect(state.waitingForResize.deferredFetches == 0)
        // The budget was never passed by more than the fetches on their way.
        #expect(state.waitingForResize.bytes == 800)
        let answers = answered(state.resized(key(6), .success(made("t6")), seconds: 0.01, now: 0))
        #expect(answers == [60: "t6"])
        #expect(state.waitingForResize.bytes == 400)
        // Kept originals are bounded by the other half.
        #expect(state.usage.originalBytes - state.waitingForResize.bytes <= 1000)
    }

    @Test func aHeldBackPrewarmFetchJoinedByAReaderTakesItsTurnAmongTheReaders() {
        var state = State(memoryBudget: 100_000, originalsBudget: 2000)
        let heavy = [UInt8](repeating: 0xff, count: 400)
        for item: Int64 in 1...3 {
            _ = miss(&state, item, from: .prewarm)
            _ = state.originalArrived(picture: Picture(itemID: item, tag: 0), .success(heavy), seconds: 0.01, now: 0)
        }
        #expect(miss(&state, 5, from: .reader) == [])
        #expect(miss(&state, 6, from: .prewarm) == [])
        #expect(ask(&state, key(6), waiter: 60).0 == .joined)
        // Readers keep coming: item 6 does not wait until none is left.
        #expect(miss(&state, 7, from: .reader) == [])
        #expect(fetches(state.resized(key(1), .success(made("t1")), seconds: 0.01, now: 0)) == [5])
        #expect(fetches(state.resized(key(2), .success(made("t2")), seconds: 0.01, now: 0)) == [6])
    }

    @Test func aBudgetSmallerThanOneOriginalSlowsTheCacheButNeverStopsIt() {
        var state = State(memoryBudget: 100_000, originalsBudget: 0)
        #expect(miss(&state, 1, from: .reader) == [1])
        #expect(miss(&state, 2, from: .reader) == [])
        #expect(resizes(state.originalArrived(picture: 1, .success(original), seconds: 0.01, now: 0)) == [key(1)])
        let first = state.resized(key(1), .success(made("t1")), seconds: 0.01, now: 0)
        #expect(answered(first) == [1: "t1"] && fetches(first) == [2])
        #expect(resizes(state.originalArrived(picture: 2, .success(original), seconds: 0.01, now: 0)) == [key(2)])
        #expect(answered(state.resized(key(2), .success(made("t2")), seconds: 0.01, now: 0)) == [2: "t2"])
        #expect(state.waitingForResize.bytes == 0 && state.waitingForResize.deferredFetches == 0)
    }

    @Test func aFailedResizeOrFetchLetsTheNextFetchGo() {
        var state = State(memoryBudget: 100_000, originalsBudget: 0)
        #expect(miss(&state, 1, from: .reader) == [1])
        #expect(miss(&state, 2, from: .reader) == [])
        #expect(miss(&state, 3, from: .reader) == [])
        // The origin fails item 1: item 2's fetch goes.
        let failed = state.originalArrived(picture: 1, .failure(.origin), seconds: nil, now: 0)
        #expect(answered(failed) == [1: "placeholder"] && fetches(failed) == [2])
        // Item 2's original cannot be read: item 3's fetch goes.
        #expect(resizes(state.originalArrived(picture: 2, .success(original), seconds: 0.01, now: 0)) == [key(2)])
        let broken = state.resized(key(2), .failure(.image), seconds: nil, now: 0)
        #expect(answered(broken) == [2: "placeholder"] && fetches(broken) == [3])
    }
}
