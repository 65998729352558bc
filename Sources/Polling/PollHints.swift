/// What an answer says of when to ask again: HTTP freshness and the feed's own
/// `ttl`, `skipHours` and `skipDays`. They may lengthen a resource's interval
/// (up to `PollRules.refreshMax`), never shorten it below the base.
public struct PollHints: Sendable, Equatable {
    /// How long the answer stays fresh, in ms (`Cache-Control: max-age` less
    /// `Age`, or `Expires` less `Date`).
    public var freshFor: Int64?
    /// The feed's `ttl`, in ms.
    public var ttl: Int64?
    /// GMT hours (0–23) in which the resource is not polled. All 24 are ignored.
    public var skipHours: Set<Int>
    /// Days (0 = Sunday … 6 = Saturday, GMT) on which the resource is not
    /// polled. All 7 are ignored.
    public var skipDays: Set<Int>

    /// Hints; the empty ones leave the base interval.
    public init(freshFor: Int64? = nil, ttl: Int64? = nil, skipHours: Set<Int> = [], skipDays: Set<Int> = []) {
        self.freshFor = freshFor
        self.ttl = ttl
        self.skipHours = skipHours
        self.skipDays = skipDays
    }
}
