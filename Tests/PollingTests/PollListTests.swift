import Foundation
import Polling
import Testing

/// `adopt` takes the whole list: new ids come, gone ids leave (their late
/// results ignored), kept ids keep their schedule; persisted states survive a restart.
@Suite struct PollListTests {
    static let minute = PollRules.minute

    @Test func adoptDropsRemovedIdsAndIgnoresTheirLateResults() {
        var schedule = PollSchedule(rules: PollRules(interval: Self.minute, perHost: 1))
        var random = SeededRandom(seed: 1)
        let one = PollResource(id: 1, host: "a", state: PollState(nextPollAt: 0))
        let two = PollResource(id: 2, host: "a", state: PollState(nextPollAt: 0))
        #expect(schedule.adopt([one, two], now: 0) == [.fetch(1)])
        // 1 leaves while its fetch runs: the host still answers it, so 2 waits for its end.
        #expect(schedule.adopt([two], now: 1_000) == [])
        #expect(schedule.state(of: 1) == nil)
        #expect(schedule.summary(now: 1_000).resources == 1)
        #expect(schedule.summary(now: 1_000).fetching == 1)
        #expect(schedule.finished(1, .failed("late", status: nil), now: 2_000, random: &random) == [.fetch(2)])
        #expect(schedule.state(of: 1) == nil, "the late result of a dropped id is ignored")
        #expect(schedule.finished(1, .unchanged(PollHints()), now: 2_500, random: &random) == [])
        #expect(schedule.summary(now: 2_500).fetching == 1)
    }

    @Test func keptIdsKeepTheirScheduleWhateverStateTheListCarries() {
        var schedule = PollSchedule(rules: PollRules(interval: Self.minute))
        var random = SeededRandom(seed: 1)
        _ = schedule.adopt([PollResource(id: 1, host: "a", state: PollState(nextPollAt: 0))], now: 0)
        _ = schedule.finished(1, .failed("down", status: 502), now: 1_000, random: &random)
        let before = schedule.state(of: 1)!
        let actions = schedule.adopt([PollResource(id: 1, host: "a", state: PollState(nextPollAt: 0)), PollResource(id: 2, host: "a")], now: 2_000)
        #expect(actions == [.fetch(2), .wake(at: before.nextPollAt!)])
        #expect(schedule.state(of: 1) == before)
    }

    @Test func aResourceMovedToAnotherHostCountsThere() {
        var schedule = PollSchedule(rules: PollRules(interval: Self.minute, perHost: 1))
        var random = SeededRandom(seed: 1)
        let list = [1, 2].map { PollResource(id: $0, host: "a", state: PollState(nextPollAt: 0)) }
        #expect(schedule.adopt(list, now: 0) == [.fetch(1)])
        // 2 moves to b, free: it starts; 1 moves to b while in flight and still holds a's slot.
        #expect(schedule.adopt([PollResource(id: 1, host: "b"), PollResource(id: 2, host: "b")], now: 1_000) == [.fetch(2)])
        #expect(schedule.status(of: 1, now: 1_000)?.host == "b")
        _ = schedule.finished(2, .unchanged(PollHints()), now: 2_000, random: &random)
        _ = schedule.finished(1, .unchanged(PollHints()), now: 3_000, random: &random)
        #expect(schedule.summary(now: 3_000).fetching == 0)
        #expect(schedule.tick(now: Self.minute) == [.fetch(1)], "both on b now: one at a time")
    }

    @Test func aRestartWithPersistedStatesKeepsNextPollsFailuresAndHolds() {
        let rules = PollRules(interval: Self.minute, perHost: 2)
        var schedule = PollSchedule(rules: rules)
        var random = SeededRandom(seed: 1)
        let list = (1...4).map { PollResource(id: Int64($0), host: $0 <= 3 ? "a" : "b", state: PollState(nextPollAt: 0)) }
        #expect(schedule.adopt(list, now: 0) == [.fetch(1), .fetch(2), .fetch(4)])
        _ = schedule.finished(1, .throttled(status: 429, retryAt: 600_000), now: 1_000, random: &random)
        _ = schedule.finished(2, .failed("HTTP 500", status: 500), now: 2_000, random: &random)
        _ = schedule.finished(4, .changed(PollHints(ttl: 30 * Self.minute)), now: 3_000, random: &random)
        let persisted = list.map { PollResource(id: $0.id, host: $0.host, state: schedule.state(of: $0.id)!) }
        #expect(persisted.map(\.state.nextPollAt!)[0] == 600_000)
        #expect(persisted[1].state.failures == 1)

        // The process restarts at 10 s and reads the states back.
        var restarted = PollSchedule(rules: rules)
        #expect(restarted.adopt(persisted, now: 10_000) == [.wake(at: 600_000)], "2 and 3 are due, but a is held; 4 comes later")
        for resource in persisted { #expect(restarted.state(of: resource.id) == resource.state) }
        #expect(restarted.summary(now: 10_000).heldHosts == ["a": 600_000])
        #expect(restarted.summary(now: 10_000).failing == 1)
        #expect(restarted.tick(now: 599_999) == [.wake(at: 600_000)])
        // At the hold's end, the two of a due first (3 since 0, 2 since its backoff); 1 waits for a slot.
        #expect(restarted.tick(now: 600_000) == [.fetch(3), .fetch(2), .wake(at: 30 * Self.minute)])
    }

    @Test func aResourcePolledElsewhereMovesWithoutAResult() {
        var schedule = PollSchedule(rules: PollRules(interval: Self.minute, perHost: 2, busyRetry: 5_000))
        var random = SeededRandom(seed: 1)
        let list = (1...3).map { PollResource(id: Int64($0), host: "a", state: PollState(nextPollAt: 0)) }
        #expect(schedule.adopt(list, now: 0) == [.fetch(1), .fetch(2)])
        // Another node won 1's claim and saw a hold on the host.
        #expect(schedule.finished(1, .polledElsewhere(next: 90_000, hostHeldUntil: 120_000), now: 1_000, random: &random) == [.wake(at: 120_000)])
        let state = schedule.state(of: 1)!
        #expect(state.nextPollAt == 90_000 && state.failures == 0 && state.lastResult == nil && state.lastFetchAt == nil)
        #expect(state.hostHeldUntil == 120_000)
        #expect(schedule.summary(now: 1_000).heldHosts == ["a": 120_000])
        // A next poll already past would have the claim asked again at once: not sooner than busyRetry.
        _ = schedule.finished(2, .polledElsewhere(next: 500, hostHeldUntil: nil), now: 2_000, random: &random)
        #expect(schedule.state(of: 2)?.nextPollAt == 7_000)
        #expect(schedule.tick(now: 120_000) == [.fetch(3), .fetch(2)])
    }

    @Test func aStateSurvivesJSONAndItsResultsKeepTheirStoredNames() throws {
        let state = PollState(
            nextPollAt: 1_800_000, failures: 3, failingSince: 42, lastFetchAt: 1_000, lastResult: .throttled, lastStatus: 503, lastError: nil,
            hostHeldUntil: 1_800_000)
        let decoded = try JSONDecoder().decode(PollState.self, from: JSONEncoder().encode(state))
        #expect(decoded == state)
        #expect(PollState() == (try JSONDecoder().decode(PollState.self, from: Data(#"{"failures":0}"#.utf8))))
        // A driver may store the raw value in a column: these names are a format.
        #expect([PollResult.changed, .unchanged, .throttled, .failed].map(\.rawValue) == ["changed", "unchanged", "throttled", "failed"])
    }
}
