import Polling
import Testing

/// A host's `Retry-After` holds every resource on it, to the millisecond,
/// capped; a `429` is no failure of the resource, a `503` is.
@Suite struct PollHostTests {
    static let minute = PollRules.minute

    /// Five resources on host "a" and one on "b", all due at 0; fetches started at 0.
    static func started(rules: PollRules = PollRules(interval: minute, perHost: 2)) -> PollSchedule {
        var schedule = PollSchedule(rules: rules)
        let list =
            (1...5).map { PollResource(id: Int64($0), host: "a", state: PollState(nextPollAt: 0)) } + [
                PollResource(id: 10, host: "b", state: PollState(nextPollAt: 0))
            ]
        #expect(schedule.adopt(list, now: 0) == [.fetch(1), .fetch(2), .fetch(10)], "two on a: perHost")
        return schedule
    }

    @Test func a429WithRetryAfterHoldsEveryResourceOfTheHostUntilExactlyThenAtMostPerHost() {
        var schedule = Self.started()
        var random = SeededRandom(seed: 1)
        let retryAt: Int64 = 121_000
        #expect(schedule.finished(1, .throttled(status: 429, retryAt: retryAt), now: 1_000, random: &random) == [.wake(at: retryAt)])
        let throttled = schedule.state(of: 1)!
        #expect(throttled.nextPollAt == retryAt, "the throttled resource comes back when asked, without jitter")
        #expect(throttled.failures == 0 && throttled.failingSince == nil, "429 is throttling, not the resource's failure")
        #expect(throttled.lastResult == .throttled && throttled.lastStatus == 429 && throttled.hostHeldUntil == retryAt)
        // Another host is not held: b answers and goes on.
        #expect(schedule.finished(10, .unchanged(PollHints()), now: 2_000, random: &random) == [.wake(at: Self.minute)])
        // a's fetch in flight ends; its resources 3, 4, 5 are due but the host is held.
        #expect(schedule.finished(2, .unchanged(PollHints()), now: 3_000, random: &random) == [.wake(at: Self.minute)])
        #expect(schedule.summary(now: 3_000).waiting == 3)
        #expect(schedule.summary(now: 3_000).heldHosts == ["a": retryAt])
        #expect(schedule.status(of: 3, now: 3_000)?.activity == .waiting)
        #expect(schedule.status(of: 3, now: 3_000)?.hostHeldUntil == retryAt)
        #expect(schedule.tick(now: Self.minute) == [.fetch(10), .wake(at: retryAt)])
        #expect(schedule.tick(now: retryAt - 1) == [.wake(at: retryAt)])
        // At the hold's end: the two earliest due of the host, no more.
        #expect(schedule.tick(now: retryAt) == [.fetch(3), .fetch(4)])
        #expect(schedule.finished(3, .unchanged(PollHints()), now: retryAt + 500, random: &random) == [.fetch(5)])
        #expect(schedule.finished(4, .unchanged(PollHints()), now: retryAt + 600, random: &random) == [.fetch(2)], "2 was due before 1")
    }

    @Test func retryAfterIsCappedAtRetryAfterMax() {
        var schedule = Self.started(rules: PollRules(interval: Self.minute, retryAfterMax: PollRules.day, perHost: 2))
        var random = SeededRandom(seed: 1)
        _ = schedule.finished(1, .throttled(status: 429, retryAt: 1_000 + 365 * PollRules.day), now: 1_000, random: &random)
        #expect(schedule.state(of: 1)?.nextPollAt == 1_000 + PollRules.day)
        #expect(schedule.summary(now: 1_000).heldHosts["a"] == 1_000 + PollRules.day)
    }

    @Test func withoutRetryAfterTheHostIsHeldForADoublingDelay() {
        var schedule = Self.started()
        var random = SeededRandom(seed: 1)
        _ = schedule.finished(1, .throttled(status: 429, retryAt: nil), now: 1_000, random: &random)
        #expect(schedule.state(of: 1)?.nextPollAt == 1_000 + Self.minute)
        // The second strike in a row holds twice as long; a past `Retry-After` counts as none.
        _ = schedule.finished(2, .throttled(status: 429, retryAt: 500), now: 2_000, random: &random)
        #expect(schedule.state(of: 2)?.nextPollAt == 2_000 + 2 * Self.minute)
        #expect(schedule.state(of: 1)?.nextPollAt == 1_000 + Self.minute, "set when it was throttled")
        #expect(schedule.summary(now: 2_000).heldHosts["a"] == 2_000 + 2 * Self.minute)
        // An answer from the host forgets the strikes (the hold stays: the host asked for it).
        #expect(schedule.tick(now: 2_000 + 2 * Self.minute) == [.fetch(3), .fetch(4)])
        _ = schedule.finished(3, .unchanged(PollHints()), now: 130_000, random: &random)
        _ = schedule.finished(4, .throttled(status: 429, retryAt: nil), now: 131_000, random: &random)
        #expect(schedule.state(of: 4)?.nextPollAt == 131_000 + Self.minute)
    }

    @Test func a503AlsoCountsAsAFailureAndWaitsForTheLaterOfBackoffAndHold() {
        var schedule = Self.started()
        var random = SeededRandom(seed: 1)
        _ = schedule.finished(1, .throttled(status: 503, retryAt: 1_000 + 10_000), now: 1_000, random: &random)
        let state = schedule.state(of: 1)!
        #expect(state.failures == 1 && state.failingSince == 1_000 && state.lastStatus == 503)
        #expect(state.nextPollAt! >= 1_000 + Self.minute / 2 && state.nextPollAt! <= 1_000 + Self.minute, "the backoff, past the hold")
        #expect(schedule.summary(now: 1_000).heldHosts["a"] == 11_000)
        #expect(schedule.tick(now: 10_999) == [.wake(at: 11_000)])
        #expect(schedule.tick(now: 11_000) == [.fetch(3)])
    }
}
