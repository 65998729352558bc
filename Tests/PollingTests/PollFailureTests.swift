import Polling
import Testing

/// Failures back off with jitter, a resource failing for days is marked and
/// still polled, `busy` is no failure, and an answer forgets the failures.
@Suite struct PollFailureTests {
    static let minute = PollRules.minute
    static let hour = PollRules.hour

    @Test func failuresBackOffDoublingWithJitterInTheUpperHalfUpToBackoffMax() {
        let rules = PollRules(interval: Self.minute, backoffMax: 6 * Self.hour)
        var delaysBySeed: [[Int64]] = []
        for seed in 1...20 {
            var schedule = PollSchedule(rules: rules)
            var random = SeededRandom(seed: UInt64(seed))
            _ = schedule.adopt([PollResource(id: 9, host: "a", state: PollState(nextPollAt: 0))], now: 0)
            var now: Int64 = 0
            var delays: [Int64] = []
            for failures in 1...16 {
                let actions = schedule.finished(9, .failed("connection refused", status: nil), now: now + 100, random: &random)
                let state = schedule.state(of: 9)!
                #expect(state.failures == failures)
                #expect(state.failingSince == 100)
                #expect(state.lastResult == .failed && state.lastError == "connection refused")
                let ceiling = min(6 * Self.hour, Self.minute << Int64(failures - 1))
                let delay = state.nextPollAt! - (now + 100)
                #expect(delay >= ceiling / 2 && delay <= ceiling, "failure \(failures): \(delay) ms")
                delays.append(delay)
                #expect(actions == [.wake(at: state.nextPollAt!)])
                now = state.nextPollAt!
                #expect(schedule.tick(now: now) == [.fetch(9)])
            }
            delaysBySeed.append(delays)
        }
        // Jittered: the same failure waits differently with another draw.
        #expect(Set(delaysBySeed.map { $0[3] }).count > 10)
        #expect(delaysBySeed.allSatisfy { $0.suffix(6).allSatisfy { $0 >= 3 * Self.hour } }, "at the ceiling, halved at worst")
    }

    @Test func anAnswerForgetsTheFailures() {
        var schedule = PollSchedule(rules: PollRules(interval: Self.minute))
        var random = SeededRandom(seed: 2)
        _ = schedule.adopt([PollResource(id: 1, host: "a", state: PollState(nextPollAt: 0))], now: 0)
        _ = schedule.finished(1, .failed("timeout", status: nil), now: 10, random: &random)
        let retry = schedule.state(of: 1)!.nextPollAt!
        #expect(schedule.tick(now: retry) == [.fetch(1)])
        _ = schedule.finished(1, .changed(PollHints()), now: retry + 10, random: &random)
        let state = schedule.state(of: 1)!
        #expect(state.failures == 0 && state.failingSince == nil && state.lastError == nil)
        #expect(state.lastResult == .changed && state.lastFetchAt == retry + 10)
        #expect(state.nextPollAt == retry + Self.minute)
    }

    @Test func aResourceFailingForDaysIsMarkedAndStillPolledAtTheCeiling() {
        let rules = PollRules(interval: Self.minute, backoffMax: 6 * Self.hour, failingFor: 2 * PollRules.day)
        var simulation = Simulation(rules: rules) { _, _, _ in (2_000, .failed("HTTP 500", status: 500)) }
        simulation.adopt([PollResource(id: 1, host: "a", state: PollState(nextPollAt: 0))])
        var healths: [PollStatus.Health] = []
        for hour in 1...(5 * 24) {
            simulation.run(until: Int64(hour) * Self.hour)
            healths.append(simulation.schedule.status(of: 1, now: simulation.now)!.health)
        }
        #expect(healths[0] == .failing(since: 2_000))
        #expect(healths[47] == .failing(since: 2_000), "two days are not yet failing for days")
        #expect(healths[48] == .failingForDays(since: 2_000))
        #expect(healths.last == .failingForDays(since: 2_000))
        let summary = simulation.schedule.summary(now: simulation.now)
        #expect(summary.resources == 1 && summary.failing == 1 && summary.failingForDays == 1)
        // Still polled, never less often than the ceiling.
        let starts = simulation.starts[1]!.map(\.at)
        let gaps = zip(starts.dropFirst(), starts).map { $0 - $1 }
        #expect(gaps.allSatisfy { $0 <= 6 * Self.hour + 2_000 })
        #expect(starts.last! > 5 * PollRules.day - 6 * Self.hour - 2_000)
        #expect(simulation.schedule.state(of: 1)!.failures >= starts.count - 1)
    }

    @Test func busyIsNotAFailureAndIsTriedAgainSoon() {
        var schedule = PollSchedule(rules: PollRules(interval: Self.minute, busyRetry: 5_000))
        var random = SeededRandom(seed: 4)
        _ = schedule.adopt([PollResource(id: 1, host: "a", state: PollState(nextPollAt: 0))], now: 0)
        _ = schedule.finished(1, .failed("reset", status: nil), now: 100, random: &random)
        let retry = schedule.state(of: 1)!.nextPollAt!
        #expect(schedule.tick(now: retry) == [.fetch(1)])
        #expect(schedule.finished(1, .busy, now: retry + 30_000, random: &random) == [.wake(at: retry + 35_000)])
        let state = schedule.state(of: 1)!
        #expect(state.failures == 1 && state.failingSince == 100, "unchanged by busy")
        #expect(state.lastResult == .failed && state.lastError == "reset" && state.lastFetchAt == 100, "busy reached no host")
        #expect(state.nextPollAt == retry + 35_000)
        // A busy poll keeps the resource's grid: answered afterwards, it is back on its slots.
        var fresh = PollSchedule(rules: PollRules(interval: Self.minute, busyRetry: 5_000))
        _ = fresh.adopt([PollResource(id: 2, host: "a", state: PollState(nextPollAt: 0))], now: 0)
        _ = fresh.finished(2, .busy, now: 1_000, random: &random)
        #expect(fresh.tick(now: 6_000) == [.fetch(2)])
        _ = fresh.finished(2, .unchanged(PollHints()), now: 7_000, random: &random)
        #expect(fresh.state(of: 2)?.nextPollAt == Self.minute)
    }
}
