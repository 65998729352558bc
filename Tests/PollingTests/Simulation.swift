import Polling
import Testing

/// A generator with a seed, so that every jitter and every random outcome of a
/// test is the same on each run (SplitMix64).
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

/// A driver in simulated time: it carries out the schedule's actions (a fetch
/// ends after the time `answer` says, with the outcome it says; a wake is the
/// one timer, replaced by each list of actions), and keeps its own book of what
/// is in flight to check the schedule's limits after every step.
struct Simulation {
    /// One fetch the driver runs.
    struct Fetch {
        var id: Int64
        var host: String
        var startedAt: Int64
        var endsAt: Int64
        var outcome: PollOutcome
    }

    /// One start, as the driver saw it.
    struct Start {
        var at: Int64
        /// The time the poll was due (the state's `nextPollAt` when it started).
        var due: Int64
    }

    var schedule: PollSchedule
    var now: Int64 = 0
    var wake: Int64?
    var random = SeededRandom(seed: 7)
    var hostOf: [Int64: String] = [:]
    var running: [Int64: Fetch] = [:]
    var starts: [Int64: [Start]] = [:]
    /// When each host's hold ends, as the throttled answers set it.
    var holds: [String: Int64] = [:]
    var steps = 0
    /// How long the fetch of a resource takes, and how it ends.
    var answer: (_ id: Int64, _ now: Int64, _ random: inout SeededRandom) -> (duration: Int64, outcome: PollOutcome)

    init(rules: PollRules, answer: @escaping (_ id: Int64, _ now: Int64, _ random: inout SeededRandom) -> (duration: Int64, outcome: PollOutcome)) {
        schedule = PollSchedule(rules: rules)
        self.answer = answer
    }

    var rules: PollRules { schedule.rules }

    mutating func adopt(_ list: [PollResource]) {
        for resource in list { hostOf[resource.id] = resource.host }
        apply(schedule.adopt(list, now: now))
    }

    /// Runs events (ends of fetches, wakes) up to `end`.
    mutating func run(until end: Int64) {
        while true {
            let nextEnd = running.values.min { ($0.endsAt, $0.id) < ($1.endsAt, $1.id) }
            let time = min(wake ?? .max, nextEnd?.endsAt ?? .max)
            guard time <= end else { break }
            now = max(now, time)
            steps += 1
            if let fetch = nextEnd, fetch.endsAt <= time {
                running[fetch.id] = nil
                apply(schedule.finished(fetch.id, fetch.outcome, now: now, random: &random))
                if case .throttled = fetch.outcome, let until = schedule.state(of: fetch.id)?.hostHeldUntil {
                    holds[fetch.host] = max(holds[fetch.host] ?? .min, until)
                }
            } else {
                apply(schedule.tick(now: now))
            }
        }
        now = max(now, end)
    }

    /// Carries out `actions` and checks what the schedule promises.
    mutating func apply(_ actions: [PollAction]) {
        let wakes = actions.filter { if case .wake = $0 { true } else { false } }
        #expect(wakes.count <= 1)
        #expect(wakes.last == actions.last || wakes.isEmpty, "the wake comes last")
        wake = nil
        for action in actions {
            switch action {
            case .wake(let at):
                #expect(at > now, "a wake in the future, or the driver would spin")
                wake = at > now ? at : nil
            case .fetch(let id):
                #expect(running[id] == nil, "\(id) is fetched twice at once")
                let due = schedule.state(of: id)?.nextPollAt ?? .max
                #expect(due <= now, "\(id) started before its time")
                let host = hostOf[id]!
                #expect((holds[host] ?? .min) <= now, "\(host) asked while held")
                let (duration, outcome) = answer(id, now, &random)
                running[id] = Fetch(id: id, host: host, startedAt: now, endsAt: now + duration, outcome: outcome)
                starts[id, default: []].append(Start(at: now, due: due))
            }
        }
        checkLimits()
    }

    func checkLimits() {
        var perHost: [String: Int] = [:]
        var young = 0
        for fetch in running.values {
            perHost[fetch.host, default: 0] += 1
            if now - fetch.startedAt < rules.slowAfter { young += 1 }
        }
        #expect(perHost.values.allSatisfy { $0 <= rules.perHost }, "a host has more than perHost fetches")
        // A fetch younger than `slowAfter` is in the fast lane.
        #expect(young <= rules.inAll)
        #expect(running.count <= rules.inAll + rules.slowLane)
    }
}
