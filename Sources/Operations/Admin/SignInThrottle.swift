/// How often an address may offer a wrong admin token: a few times freely,
/// then it waits, twice as long after each further wrong one.
///
/// A pure state machine: the caller passes `now` (seconds on any one clock)
/// and holds it under its lock. Only wrong tokens count (a `Bearer` header,
/// `/admin?token=`, the sign-in form); a right one forgets the address's
/// record, and a request with no token (or a session cookie, 128 random bits
/// no one guesses) is not a guess. While an address waits, every token it
/// offers is answered "wait" unread: were a right one let through, the
/// answer would tell a guesser which guess was right.
///
/// Memory is bounded: at most `capacity` addresses are remembered; a record
/// is forgotten `forgetAfter` seconds after its last wrong token (or the
/// end of its wait, if later), and when the table is full the address whose
/// last wrong token is oldest makes room. An attacker with more addresses
/// than that can make the table forget one; each of their addresses is
/// still slowed on its own.
package struct SignInThrottle: Sendable {
    /// The numbers the throttle runs by.
    package struct Rules: Sendable {
        /// Wrong tokens an address may offer before it first waits.
        var freeFailures = 5
        /// The first wait, in seconds; each further wrong token doubles it.
        var firstWait = Self.defaultFirstWait
        /// The first wait unless told: a second.
        package static let defaultFirstWait = 1.0
        /// The longest wait, in seconds.
        var longestWait = 900.0
        /// Seconds after its last wrong token (or its wait's end) that an address is forgotten.
        var forgetAfter = 3600.0
        /// Addresses remembered at most.
        var capacity = 4096

        /// The rules, with the first wait `firstWait` seconds (tests lengthen it, so no wait ends while they look).
        package init(firstWait: Double = defaultFirstWait) {
            self.firstWait = firstWait
        }
    }

    /// What an address may do now.
    enum Verdict: Equatable, Sendable {
        /// Offer a token: it is checked.
        case check
        /// Wait this many whole seconds (at least 1) before offering another.
        case wait(seconds: Int)
    }

    /// One address's wrong tokens.
    struct Record: Equatable, Sendable {
        /// Wrong tokens since it was last forgotten.
        var failures: Int
        /// When its last wrong token came.
        var lastFailure: Double
        /// Until when it waits (not after `lastFailure` while it offers its free tokens).
        var waitsUntil: Double
    }

    let rules: Rules
    /// The addresses remembered.
    private(set) var records: [String: Record] = [:]

    init(rules: Rules = Rules()) {
        self.rules = rules
    }

    /// Whether `address` may offer a token at `now`.
    func verdict(for address: String, now: Double) -> Verdict {
        guard let record = records[address], !isForgotten(record, now: now), record.waitsUntil > now else { return .check }
        return .wait(seconds: Self.wholeSeconds(record.waitsUntil - now))
    }

    /// Notes a wrong token from `address` at `now`; answers what the
    /// address may do next (`.wait` once its free tokens are spent).
    @discardableResult
    mutating func failed(_ address: String, now: Double) -> Verdict {
        var record = records[address].flatMap { isForgotten($0, now: now) ? nil : $0 } ?? Record(failures: 0, lastFailure: now, waitsUntil: now)
        if records[address] == nil { makeRoom(now: now) }
        record.failures += 1
        record.lastFailure = now
        let beyond = record.failures - rules.freeFailures
        if beyond >= 0 {
            record.waitsUntil = now + min(rules.longestWait, rules.firstWait * Double(1 << min(beyond, 30)))
        }
        records[address] = record
        return record.waitsUntil > now ? .wait(seconds: Self.wholeSeconds(record.waitsUntil - now)) : .check
    }

    /// Notes a right token from `address`: its record is forgotten.
    mutating func succeeded(_ address: String) {
        records[address] = nil
    }

    private func isForgotten(_ record: Record, now: Double) -> Bool {
        max(record.lastFailure, record.waitsUntil) + rules.forgetAfter <= now
    }

    /// Room for one more address: the forgotten ones go, then, if the table
    /// is still full, the one whose last wrong token is oldest.
    private mutating func makeRoom(now: Double) {
        guard records.count >= rules.capacity else { return }
        records = records.filter { !isForgotten($0.value, now: now) }
        while records.count >= rules.capacity, let oldest = records.min(by: { $0.value.lastFailure < $1.value.lastFailure }) {
            records[oldest.key] = nil
        }
    }

    /// `seconds` rounded up to a whole second, at least 1 (what `Retry-After` says).
    private static func wholeSeconds(_ seconds: Double) -> Int {
        max(1, Int(seconds.rounded(.up)))
    }
}
