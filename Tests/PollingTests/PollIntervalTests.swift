import Polling
import Testing

/// A resource that answers: its base interval, anchored on its slots, and the
/// hints that lengthen it (`max-age`, `Expires`, `ttl`, `skipHours`, `skipDays`).
@Suite struct PollIntervalTests {
    static let minute = PollRules.minute
    static let hour = PollRules.hour
    /// Monday 1 January 2024, 00:00 GMT.
    static let monday: Int64 = 1_704_067_200_000

    /// One resource due at `at`, polled once at `at` and answered at `at + 1 s`
    /// with `hints`: returns its next poll.
    static func nextPoll(after hints: PollHints, at: Int64 = monday, rules: PollRules = PollRules(interval: minute)) -> Int64? {
        var schedule = PollSchedule(rules: rules)
        var random = SeededRandom(seed: 1)
        #expect(schedule.adopt([PollResource(id: 1, host: "a", state: PollState(nextPollAt: at))], now: at) == [.fetch(1)])
        _ = schedule.finished(1, .unchanged(hints), now: at + 1_000, random: &random)
        return schedule.state(of: 1)?.nextPollAt
    }

    @Test func theIntervalIsTheBaseAndAnchoredOnTheSlotNotTheFinish() {
        var simulation = Simulation(rules: PollRules(interval: Self.minute)) { _, _, random in
            // Every answer comes late, up to half an interval.
            (Int64.random(in: 1...30_000, using: &random), .unchanged(PollHints()))
        }
        simulation.adopt([PollResource(id: 1, host: "a", state: PollState(nextPollAt: 0))])
        simulation.run(until: 100 * Self.minute - 1)
        let starts = simulation.starts[1] ?? []
        #expect(starts.count == 100)
        #expect(starts.enumerated().allSatisfy { $0.element.at == Int64($0.offset) * Self.minute }, "no drift")
        #expect(simulation.schedule.state(of: 1)?.lastResult == .unchanged)
    }

    @Test func hintsShorterThanTheBaseLeaveIt() {
        #expect(Self.nextPoll(after: PollHints(freshFor: 10_000, ttl: 30_000)) == Self.monday + Self.minute)
    }

    @Test func maxAgeOrExpiresLengthensTheIntervalUpToRefreshMax() {
        #expect(Self.nextPoll(after: PollHints(freshFor: 3 * Self.minute)) == Self.monday + 3 * Self.minute)
        #expect(Self.nextPoll(after: PollHints(freshFor: 10 * PollRules.day)) == Self.monday + PollRules.day)
        let rules = PollRules(interval: Self.minute, refreshMax: 2 * Self.hour)
        #expect(Self.nextPoll(after: PollHints(freshFor: 5 * Self.hour), rules: rules) == Self.monday + 2 * Self.hour)
    }

    @Test func ttlLengthensTheIntervalUpToRefreshMax() {
        #expect(Self.nextPoll(after: PollHints(ttl: 30 * Self.minute)) == Self.monday + 30 * Self.minute)
        #expect(Self.nextPoll(after: PollHints(freshFor: 5 * Self.minute, ttl: 30 * Self.minute)) == Self.monday + 30 * Self.minute)
        // `<ttl>525600</ttl>`: a year, read as a day.
        #expect(Self.nextPoll(after: PollHints(ttl: 525_600 * Self.minute)) == Self.monday + PollRules.day)
    }

    @Test func skipHoursMoveThePollOutOfThem() {
        let rules = PollRules(interval: Self.hour)
        #expect(Self.nextPoll(after: PollHints(skipHours: [1, 2, 3]), rules: rules) == Self.monday + 4 * Self.hour)
        #expect(Self.nextPoll(after: PollHints(skipHours: [5]), rules: rules) == Self.monday + Self.hour)
        // Past midnight: 23:00 to 01:00 skipped from 22:00 + 1 h.
        let evening = Self.monday + 22 * Self.hour
        #expect(Self.nextPoll(after: PollHints(skipHours: [23, 0]), at: evening, rules: rules) == Self.monday + 25 * Self.hour)
        // Out-of-range hours are not hours.
        #expect(Self.nextPoll(after: PollHints(skipHours: [24, -1, 99]), rules: rules) == Self.monday + Self.hour)
    }

    @Test func allHoursOrAllDaysSkippedAreIgnored() {
        let rules = PollRules(interval: Self.hour)
        #expect(Self.nextPoll(after: PollHints(skipHours: Set(0..<24)), rules: rules) == Self.monday + Self.hour)
        #expect(Self.nextPoll(after: PollHints(skipDays: Set(0..<7)), rules: rules) == Self.monday + Self.hour)
    }

    @Test func skipDaysMoveThePollToTheNextDayAllowedButNoFurtherThanRefreshMax() {
        let rules = PollRules(interval: Self.hour)
        // Monday (1) skipped: Tuesday 00:00.
        #expect(Self.nextPoll(after: PollHints(skipDays: [1]), rules: rules) == Self.monday + PollRules.day)
        // Monday to Wednesday skipped: Thursday is past a day from now, so a day from now.
        #expect(Self.nextPoll(after: PollHints(skipDays: [1, 2, 3]), rules: rules) == Self.monday + 1_000 + PollRules.day)
        // Sunday (0) skipped from Saturday 23:30 + 1 h: Monday 00:00.
        let saturday = Self.monday - PollRules.day - 30 * Self.minute
        let rulesOfTwoDays = PollRules(interval: Self.hour, refreshMax: 2 * PollRules.day)
        #expect(Self.nextPoll(after: PollHints(skipDays: [0]), at: saturday, rules: rulesOfTwoDays) == Self.monday)
    }

    @Test func aResourceFirstSeenIsPolledAtOnceThenOnItsOwnGridAnIntervalOrMoreLater() {
        var schedule = PollSchedule(rules: PollRules(interval: Self.minute, inAll: 1000))
        var random = SeededRandom(seed: 5)
        let list = (1...1000).map { PollResource(id: Int64($0), host: "h\($0 % 50)") }
        let now: Int64 = 1_000_000
        let first = schedule.adopt(list, now: now)
        #expect(first.filter { if case .fetch = $0 { true } else { false } }.count == 100, "two per host")
        // Answer everything at once as it starts, as a driver would.
        var pending = first.compactMap { if case .fetch(let id) = $0 { id } else { nil } }
        var seconds: Set<Int64> = []
        while let id = pending.popLast() {
            for case .fetch(let next) in schedule.finished(id, .unchanged(PollHints()), now: now + 10, random: &random) { pending.append(next) }
            let next = schedule.state(of: id)!.nextPollAt!
            #expect(next >= now + Self.minute && next < now + 2 * Self.minute)
            seconds.insert(next / 1_000)
        }
        // The second polls spread over the interval instead of all falling together.
        #expect(seconds.count > 50)
    }
}
