/// How politely a `PollSchedule` polls: every resource's base interval and the
/// ceilings on lengthening it, backing off and honouring holds, and how many
/// fetches may be in flight at once. Times are milliseconds.
public struct PollRules: Sendable, Equatable {
    /// Every resource's base interval: the time between two polls of a resource
    /// that answers and asks for nothing longer.
    public let interval: Int64
    /// The longest interval a resource's own hints (`max-age`, `Expires`, RSS
    /// `ttl`, `skipHours`) may ask for: a `<ttl>` of a year means daily, not yearly.
    public let refreshMax: Int64
    /// The longest a failing resource waits before it is tried again (before
    /// jitter); never shorter than `interval`, so a failing resource is not
    /// polled more often than a healthy one.
    public let backoffMax: Int64
    /// The longest a host's `Retry-After` may hold it: a hostile year cannot
    /// silence a host.
    public let retryAfterMax: Int64
    /// How long a resource fails before it is "failing for days" (shown as such;
    /// still polled at the ceiling, never dropped).
    public let failingFor: Int64
    /// The most fetches in flight at once for one host.
    public let perHost: Int
    /// The most fetches in flight at once in the fast lane, that is in all but
    /// for those moved to the slow lane.
    public let inAll: Int
    /// How long a fetch runs before it may leave the fast lane for the slow one.
    public let slowAfter: Int64
    /// The most fetches in the slow lane: slow origins fill it, never the fast lane.
    public let slowLane: Int
    /// When a resource whose fetch found no connection in time (`busy`) is tried again.
    public let busyRetry: Int64

    /// One minute, hour and day in milliseconds, for the defaults and callers' sums.
    public static let minute: Int64 = 60_000
    public static let hour: Int64 = 3_600_000
    public static let day: Int64 = 86_400_000

    /// Rules polling each resource every `interval` ms; the defaults are the
    /// issue's: a day's ceiling on hints and holds, six hours on backoff, two
    /// days before "failing for days", two fetches per host and 16 in all.
    public init(
        interval: Int64,
        refreshMax: Int64 = PollRules.day,
        backoffMax: Int64 = 6 * PollRules.hour,
        retryAfterMax: Int64 = PollRules.day,
        failingFor: Int64 = 2 * PollRules.day,
        perHost: Int = 2,
        inAll: Int = 16,
        slowAfter: Int64 = 5_000,
        slowLane: Int = 16,
        busyRetry: Int64 = 5_000
    ) {
        precondition(interval > 0, "a poll interval must be positive")
        precondition(perHost > 0 && inAll > 0 && slowLane >= 0, "polling needs a fetch per host and in all")
        precondition(refreshMax >= 0 && backoffMax >= 0 && retryAfterMax >= 0 && failingFor >= 0 && slowAfter >= 0 && busyRetry > 0)
        self.interval = interval
        self.refreshMax = refreshMax
        self.backoffMax = backoffMax
        self.retryAfterMax = retryAfterMax
        self.failingFor = failingFor
        self.perHost = perHost
        self.inAll = inAll
        self.slowAfter = slowAfter
        self.slowLane = slowLane
        self.busyRetry = busyRetry
    }
}
