/// What a driver persists for each resource and hands back to `adopt` after a
/// restart, so that next polls, backoff and a host's hold survive it. Times are
/// wall-clock milliseconds since 1970.
public struct PollState: Sendable, Equatable, Codable {
    /// When the resource is polled next (or, while a fetch runs, the time that
    /// poll was due). `nil` for a resource never scheduled: polled at once.
    public var nextPollAt: Int64?
    /// Failed polls since the last answer (a `429` is not one; a `503` is).
    public var failures: Int
    /// When the resource's current run of failures began.
    public var failingSince: Int64?
    /// When the last poll that reached the resource's host ended.
    public var lastFetchAt: Int64?
    /// How that poll ended.
    public var lastResult: PollResult?
    /// The HTTP status of a throttled or failed poll.
    public var lastStatus: Int?
    /// Why the last poll failed, for the operator.
    public var lastError: String?
    /// The hold the last poll's `429`/`503` put on the resource's host, so that
    /// after a restart no resource of that host starts before it.
    public var hostHeldUntil: Int64?

    /// A state; the empty one is a resource never polled.
    public init(
        nextPollAt: Int64? = nil, failures: Int = 0, failingSince: Int64? = nil, lastFetchAt: Int64? = nil, lastResult: PollResult? = nil,
        lastStatus: Int? = nil, lastError: String? = nil, hostHeldUntil: Int64? = nil
    ) {
        self.nextPollAt = nextPollAt
        self.failures = failures
        self.failingSince = failingSince
        self.lastFetchAt = lastFetchAt
        self.lastResult = lastResult
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.hostHeldUntil = hostHeldUntil
    }
}

/// How a poll that reached its host ended, as the operator reads it and a
/// driver stores it (its raw value). A `busy` poll never reached the host and
/// leaves the last result as it was.
public enum PollResult: String, Sendable, Equatable, Codable {
    /// New content.
    case changed
    /// Nothing new (a `304`, or the same body again).
    case unchanged
    /// The host asked to be left alone (`429`, `503`).
    case throttled
    /// Anything else that went wrong.
    case failed
}
