import Polling
import Testing

/// `perHost` and `inAll` are never exceeded, slow fetches leave the fast lane,
/// and resources answering in time are polled once per interval.
@Suite struct PollLimitTests {
    static let minute = PollRules.minute

    @Test func slowFetchesMoveToTheSlowLaneAndFreeAFastSlot() {
        var schedule = PollSchedule(rules: PollRules(interval: Self.minute, inAll: 2, slowAfter: 5_000, slowLane: 1))
        var random = SeededRandom(seed: 1)
        let list = (1...4).map { PollResource(id: Int64($0), host: "h\($0)", state: PollState(nextPollAt: 0)) }
        // Two start; the rest wait for a fast slot, which the oldest frees by 5 s.
        #expect(schedule.adopt(list, now: 0) == [.fetch(1), .fetch(2), .wake(at: 5_000)])
        #expect(schedule.tick(now: 4_999) == [.wake(at: 5_000)])
        #expect(schedule.tick(now: 5_000) == [.fetch(3)])
        #expect(schedule.status(of: 1, now: 5_000)?.activity == .fetchingSlowly(since: 0))
        #expect(schedule.status(of: 2, now: 5_000)?.activity == .fetching(since: 0))
        #expect(schedule.status(of: 4, now: 5_000)?.activity == .waiting)
        #expect(schedule.summary(now: 5_000).fetching == 3)
        #expect(schedule.summary(now: 5_000).slow == 1)
        // The slow lane is full: 2 keeps counting in the fast lane, and no time frees a slot.
        #expect(schedule.tick(now: 20_000) == [])
        // 1 ends: 2 moves to the slow lane, and 4 starts.
        #expect(schedule.finished(1, .unchanged(PollHints()), now: 21_000, random: &random) == [.fetch(4), .wake(at: Self.minute)])
        #expect(schedule.status(of: 2, now: 21_000)?.activity == .fetchingSlowly(since: 0))
    }

    @Test func anAnsweredFetchFreesItsSlotsButIsNotPolledAgainUntilItFinishes() {
        var schedule = PollSchedule(rules: PollRules(interval: Self.minute, perHost: 2, inAll: 16))
        var random = SeededRandom(seed: 1)
        let list = (1...3).map { PollResource(id: Int64($0), host: "a", state: PollState(nextPollAt: 0)) }
        #expect(schedule.adopt(list, now: 0) == [.fetch(1), .fetch(2)])
        // 1's answer is in, its items are being written: 3 takes its slot on the host.
        #expect(schedule.answered(1, now: 100) == [.fetch(3)])
        #expect(schedule.answered(1, now: 100) == [], "answered once")
        #expect(schedule.summary(now: 100).fetching == 3)
        #expect(schedule.status(of: 1, now: 100)?.activity == .fetching(since: 0))
        // Its outcome comes later and schedules it then; the slot is not freed twice.
        let fetches = { (actions: [PollAction]) in actions.filter { if case .fetch = $0 { true } else { false } }.count }
        #expect(fetches(schedule.finished(1, .changed(PollHints()), now: 1_100, random: &random)) == 0)
        #expect(fetches(schedule.finished(2, .unchanged(PollHints()), now: 1_200, random: &random)) == 0)
        #expect(fetches(schedule.finished(3, .unchanged(PollHints()), now: 1_300, random: &random)) == 0)
        #expect(schedule.summary(now: 1_300).fetching == 0)
        // When all three are due again, two start, not three: the host's count is whole.
        #expect(fetches(schedule.tick(now: 3 * Self.minute)) == 2)
    }

    @Test func limitsHoldInARandomSimulationOfAThousandResourcesOnFiftyHosts() {
        let rules = PollRules(interval: 5 * Self.minute, backoffMax: PollRules.hour, perHost: 2, inAll: 16, slowAfter: 5_000, slowLane: 8)
        var simulation = Simulation(rules: rules) { _, now, random in
            let duration: Int64 =
                switch Int.random(in: 0..<10, using: &random) {
                case 0: Int64.random(in: 5_000...40_000, using: &random)  // slow
                default: Int64.random(in: 5...1_500, using: &random)
                }
            let outcome: PollOutcome =
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<40: .unchanged(PollHints())
                case 40..<60: .changed(PollHints(freshFor: Int64.random(in: 0...(20 * PollRules.minute), using: &random)))
                case 60..<75: .failed("HTTP 500", status: 500)
                case 75..<80: .throttled(status: 429, retryAt: now + Int64.random(in: 0...(10 * PollRules.minute), using: &random))
                case 80..<83: .throttled(status: 429, retryAt: nil)
                case 83..<86: .throttled(status: 503, retryAt: nil)
                default: .busy
                }
            return (duration, outcome)
        }
        simulation.adopt((1...1000).map { PollResource(id: Int64($0), host: "h\($0 % 50)") })
        simulation.run(until: 4 * PollRules.hour)
        let polls = simulation.starts.values.map(\.count).reduce(0, +)
        #expect(polls > 10_000)
        #expect(simulation.starts.count == 1000, "every resource polled")
        // Nobody starves: every resource was polled in the last two hours (the backoff's ceiling is one).
        let latest = simulation.starts.values.map { $0.last!.at }.min()!
        #expect(latest > 2 * PollRules.hour)
        let summary = simulation.schedule.summary(now: simulation.now)
        #expect(summary.resources == 1000 && summary.fetching == simulation.running.count)
        #expect(summary.fetching - summary.slow <= rules.inAll && summary.slow <= rules.slowLane)
    }

    @Test func eachResourceIsPolledExactlyOncePerIntervalWhenItAnswersInTime() {
        let rules = PollRules(interval: Self.minute, perHost: 2, inAll: 16)
        var simulation = Simulation(rules: rules) { _, _, random in (Int64.random(in: 5...200, using: &random), .unchanged(PollHints())) }
        simulation.adopt((1...1000).map { PollResource(id: Int64($0), host: "h\($0 % 50)") })
        simulation.run(until: 12 * Self.minute)
        for (id, starts) in simulation.starts {
            // The first poll at once, then one per interval on the resource's grid, each slot an interval after the last.
            #expect(starts[0].due == 0)
            let slots = starts.dropFirst().map(\.due)
            #expect(slots.first! >= Self.minute && slots.first! < 2 * Self.minute)
            #expect(zip(slots.dropFirst(), slots).allSatisfy { $0 - $1 == Self.minute }, "resource \(id)")
            // Limits delay a start a little, never by an interval.
            #expect(starts.dropFirst().allSatisfy { $0.at - $0.due < 5_000 }, "resource \(id)")
            for window in 1...10 {
                let from = Int64(window) * Self.minute
                #expect(slots.filter { $0 >= from && $0 < from + Self.minute }.count == 1, "resource \(id), interval \(window)")
            }
        }
        #expect(simulation.starts.count == 1000)
    }
}
