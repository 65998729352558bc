import Reckoning

/// What an outcome does to a resource's next poll and to its host: the
/// issue's "polite polling" rules, one function each.
extension PollSchedule {
    /// Applies `outcome` of the resource's fetch, answered by `host`, at `now`.
    mutating func record(_ outcome: PollOutcome, of id: Int64, answeredBy host: String, now: Int64, random: inout some RandomNumberGenerator) {
        var resource = resources[id]!
        switch outcome {
        case .changed(let hints):
            answered(&resource, .changed, hints: hints, host: host, now: now)
        case .unchanged(let hints):
            answered(&resource, .unchanged, hints: hints, host: host, now: now)
        case .failed(let reason, let status):
            let next = now + backoff(after: countFailure(&resource.state, now: now), random: &random)
            resource.slot = next
            resource.state.nextPollAt = next
            resource.state.lastResult = .failed
            resource.state.lastStatus = status
            resource.state.lastError = reason
            resource.state.hostHeldUntil = nil
            resource.state.lastFetchAt = now
        case .throttled(let status, let retryAt):
            hosts[host]!.strikes += 1
            // A `Retry-After` already past (or 0) would have the host asked again at once, and again: the strikes' hold instead.
            let asked = retryAt.flatMap { $0 > now ? $0 : nil } ?? now + ceilingDelay(doubling: hosts[host]!.strikes)
            hold(host, until: min(asked, now + rules.retryAfterMax))
            let heldUntil = hosts[host]!.heldUntil
            var next = heldUntil
            if status != 429 { next = max(next, now + backoff(after: countFailure(&resource.state, now: now), random: &random)) }
            resource.slot = next
            resource.state.nextPollAt = next
            resource.state.lastResult = .throttled
            resource.state.lastStatus = status
            resource.state.lastError = nil
            resource.state.hostHeldUntil = heldUntil
            resource.state.lastFetchAt = now
        case .busy:
            // The slot stays: once it answers, the resource is back on its grid.
            resource.state.nextPollAt = now + rules.busyRetry
        case .polledElsewhere(let next, let heldUntil):
            if let heldUntil, heldUntil > now {
                hold(host, until: min(heldUntil, now + rules.retryAfterMax))
                resource.state.hostHeldUntil = hosts[host]!.heldUntil
            }
            let due = min(max(next, now + rules.busyRetry), now + longestWait)
            resource.slot = due
            resource.state.nextPollAt = due
        }
        resources[id] = resource
    }

    /// An answer: the next poll on the resource's grid, its failures and its host's strikes forgotten.
    private mutating func answered(_ resource: inout Resource, _ result: PollResult, hints: PollHints, host: String, now: Int64) {
        let next = nextAfterAnswer(slot: resource.slot, hints: hints, now: now)
        resource.slot = next
        resource.state.nextPollAt = next
        resource.state.failures = 0
        resource.state.failingSince = nil
        resource.state.lastResult = result
        resource.state.lastStatus = nil
        resource.state.lastError = nil
        resource.state.hostHeldUntil = nil
        resource.state.lastFetchAt = now
        hosts[host]!.strikes = 0
    }

    /// The longest any rule makes a resource wait: a time further ahead (a
    /// clock that jumped, a bad peer) is pulled in to it.
    var longestWait: Int64 { max(rules.refreshMax, rules.retryAfterMax, rules.backoffMax, rules.interval) }

    /// The interval an answer with `hints` asks for: the base, lengthened by
    /// the answer's freshness or `ttl`, never past `refreshMax`.
    func interval(_ hints: PollHints) -> Int64 {
        let asked = max(rules.interval, hints.freshFor ?? 0, hints.ttl ?? 0)
        return min(asked, max(rules.interval, rules.refreshMax))
    }

    /// The next poll after an answer: the first point at or after `now` of the
    /// grid `slot + k·interval` (k ≥ 1), so neither late finishes nor a pause
    /// (a restart, a long fetch) shifts the resource's polls or has it polled
    /// twice to catch up; then out of its skipped hours and days, and never
    /// later than `refreshMax` from now.
    func nextAfterAnswer(slot: Int64, hints: PollHints, now: Int64) -> Int64 {
        let interval = interval(hints)
        var next = slot + interval
        if next < now { next += (now - next + interval - 1) / interval * interval }
        next = Self.firstAllowed(from: next, skipHours: hints.skipHours, skipDays: hints.skipDays)
        return min(next, now + max(rules.interval, rules.refreshMax))
    }

    /// Counts one more failure in `state`; returns how many there are now.
    private func countFailure(_ state: inout PollState, now: Int64) -> Int {
        state.failures += 1
        if state.failingSince == nil { state.failingSince = now }
        return state.failures
    }

    /// The wait before trying a resource that has failed `failures` times in a
    /// row: the doubling delay, drawn in its upper half ("equal jitter": never
    /// sooner than half, and the resources of one failing host spread out).
    func backoff(after failures: Int, random: inout some RandomNumberGenerator) -> Int64 {
        let delay = ceilingDelay(doubling: failures)
        return Int64.random(in: (delay + 1) / 2...delay, using: &random)
    }

    /// `interval · 2^(n−1)`, at most the backoff ceiling (`backoffMax`, or the
    /// interval where that is longer).
    func ceilingDelay(doubling n: Int) -> Int64 {
        let ceiling = max(rules.backoffMax, rules.interval)
        let shift = max(0, n - 1)
        guard shift < 62, rules.interval <= ceiling >> Int64(shift) else { return ceiling }
        return rules.interval << Int64(shift)
    }

    /// The slot before the first regular poll of a resource first seen at
    /// `now`: its grid is the multiples of the interval offset by a phase
    /// from its id's FNV-1a hash (the same on every node and after a restart),
    /// and its second poll is the first grid point at least an interval after
    /// the first, so no resource is polled twice within an interval.
    func firstSlot(of id: Int64, now: Int64) -> Int64 {
        let base = rules.interval
        let phase = Int64(withUnsafeBytes(of: id.littleEndian) { FNV1a.hash64($0) } % UInt64(base))
        let earliest = now + base
        let k = Self.floorDivide(earliest - phase + base - 1, base)
        return phase + k * base - base
    }

    /// The first instant at or after `time` outside the skipped GMT hours and
    /// days (all 24 hours, or all 7 days, skipped are ignored: a feed cannot
    /// ask never to be read).
    static func firstAllowed(from time: Int64, skipHours: Set<Int>, skipDays: Set<Int>) -> Int64 {
        let hours = skipHours.filter { (0..<24).contains($0) }
        let days = skipDays.filter { (0..<7).contains($0) }
        let skippedHours = hours.count < 24 ? hours : []
        let skippedDays = days.count < 7 ? days : []
        guard !skippedHours.isEmpty || !skippedDays.isEmpty else { return time }
        var time = time
        // A week of hours at most: some hour of some day is allowed.
        for _ in 0...(24 * 7) {
            let hour = floorDivide(time, PollRules.hour)
            // 1 January 1970 was a Thursday (4).
            let weekday = Int(floorModulo(floorDivide(time, PollRules.day) + 4, 7))
            if !skippedHours.contains(Int(floorModulo(hour, 24))) && !skippedDays.contains(weekday) { return time }
            time = (hour + 1) * PollRules.hour
        }
        return time
    }

    static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    static func floorModulo(_ a: Int64, _ b: Int64) -> Int64 {
        a - floorDivide(a, b) * b
    }
}
