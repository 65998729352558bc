/// What an RSS channel says about how often it is worth asking for again:
/// `<ttl>`, `<skipHours>` and `<skipDays>`. A poller may lengthen a source's
/// interval by them; it never has to, and a value out of range is left out
/// rather than guessed at. Atom and JSON Feed say none of this: their hints
/// are empty.
public struct FeedHints: Sendable, Equatable {
    /// The longest `ttl` taken: a year, in minutes. More is a typo or a joke,
    /// and a source asked for once a decade is a source lost.
    public static let ttlLimit = 525_600

    /// Minutes the channel may be cached before it is asked for again
    /// (`<ttl>`, 1…525,600), when it says.
    public var ttlMinutes: Int?
    /// Hours of the day (0–23, GMT) in which the channel asks not to be read
    /// (`<skipHours><hour>`; 24, which some RSS 0.91 feeds write for
    /// midnight, is read as 0).
    public var skipHours: Set<Int>
    /// Days of the week on which the channel asks not to be read
    /// (`<skipDays><day>`), 0 for Sunday through 6 for Saturday, as
    /// `Calendar` and `cron` count them.
    public var skipDays: Set<Int>

    /// Hints; none by default.
    public init(ttlMinutes: Int? = nil, skipHours: Set<Int> = [], skipDays: Set<Int> = []) {
        self.ttlMinutes = ttlMinutes
        self.skipHours = skipHours
        self.skipDays = skipDays
    }

    /// Whether the channel gave no hint at all.
    public var isEmpty: Bool { ttlMinutes == nil && skipHours.isEmpty && skipDays.isEmpty }
}

extension FeedHints {
    /// The text of a `<ttl>` as minutes, or nil when it is not a whole number in range.
    static func ttl(_ text: String) -> Int? {
        guard let minutes = Int(text.trimmingFeedSpace()), (1...ttlLimit).contains(minutes) else { return nil }
        return minutes
    }

    /// The text of an `<hour>` as an hour 0–23, or nil when it is none.
    static func hour(_ text: String) -> Int? {
        guard let hour = Int(text.trimmingFeedSpace()), (0...24).contains(hour) else { return nil }
        return hour % 24
    }

    /// The text of a `<day>` (an English day name, any case) as 0 for
    /// Sunday through 6 for Saturday, or nil when it names no day.
    static func day(_ text: String) -> Int? {
        dayNumbers[text.trimmingFeedSpace().lowercased()]
    }

    private static let dayNumbers: [String: Int] = [
        "sunday": 0, "monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5, "saturday": 6,
    ]
}
