/// Whether Redis is worth asking, as a state machine with no threads, locks or clock.
///
/// A failed connection marks Redis down for everyone: commands then fail at
/// once (the caller's own tiers serve) instead of each paying a connect
/// timeout. After a back-off (doubling from `firstBackOff` to `longestBackOff`)
/// one command is let through as a probe; its success brings Redis back up.
struct RedisHealth: Sendable, Equatable {
    enum State: Sendable, Equatable {
        case up
        /// Down since `since`, with `failures` in a row; the next probe at `retryAt`.
        case down(since: Double, retryAt: Double, failures: Int)
        /// Down, and one command is trying now.
        case probing(since: Double, failures: Int)
    }

    private(set) var state = State.up
    let firstBackOff: Double
    let longestBackOff: Double

    init(firstBackOff: Double = 0.25, longestBackOff: Double = 5) {
        self.firstBackOff = firstBackOff
        self.longestBackOff = max(firstBackOff, longestBackOff)
    }

    var isUp: Bool { state == .up }

    /// When Redis went down, while it is.
    var downSince: Double? {
        switch state {
        case .up: nil
        case .down(let since, _, _), .probing(let since, _): since
        }
    }

    /// Tries that failed since Redis went down: the one that called it down,
    /// then each probe's (0 while up). Commands that were already on their way
    /// when it went down are not counted.
    var failedTries: Int {
        switch state {
        case .up: 0
        case .down(_, _, let failures), .probing(_, let failures): failures
        }
    }

    /// Whether a command may try Redis at `now`; a `true` while down makes it the probe.
    mutating func mayTry(now: Double) -> Bool {
        switch state {
        case .up:
            return true
        case .probing:
            return false
        case .down(let since, let retryAt, let failures):
            guard now >= retryAt else { return false }
            state = .probing(since: since, failures: failures)
            return true
        }
    }

    /// A command got through to Redis (even an error reply is Redis answering).
    mutating func succeeded() { state = .up }

    /// A command could not reach Redis at `now`. Only the first failure and a
    /// probe's lengthen the wait: commands already on their way when Redis was
    /// called down fail with it, and the same stall met on each connection
    /// at once (4 of them) would otherwise put it off for 2^4 back-offs.
    mutating func failed(now: Double) {
        let (since, failures): (Double, Int)
        switch state {
        case .up: (since, failures) = (now, 0)
        case .down: return
        case .probing(let s, let f): (since, failures) = (s, f)
        }
        let backOff = min(longestBackOff, firstBackOff * Double(1 << min(failures, 20)))
        state = .down(since: since, retryAt: now + backOff, failures: failures + 1)
    }
}
