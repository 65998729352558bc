/// How a fetch the schedule started ended, as the driver tells `PollSchedule.finished`.
public enum PollOutcome: Sendable, Equatable {
    /// The resource answered with new content; `PollHints` from its headers and body.
    case changed(PollHints)
    /// The resource answered with nothing new (`304`, or the same body).
    case unchanged(PollHints)
    /// The host asked to be left alone (`429`, `503`), until `retryAt` (wall-clock
    /// ms, from `Retry-After`) if it said. Every resource of the host waits. A
    /// `429` is not the resource's failure; any other status (`503`) is.
    case throttled(status: Int, retryAt: Int64?)
    /// Anything else: another status, a timeout, a reset, too large, not a feed.
    case failed(String, status: Int?)
    /// No connection in time: not the resource's fault, tried again soon and
    /// not counted.
    case busy
    /// Another poller polls it (in a cluster, the node that won the claim): no
    /// result is recorded here; the resource is due again at `next` (no sooner
    /// than `busyRetry` from now), and its host is held until `hostHeldUntil`
    /// when that poller saw a hold.
    case polledElsewhere(next: Int64, hostHeldUntil: Int64?)
}
