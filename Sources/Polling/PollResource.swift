/// A resource to poll, as a driver lists it for `PollSchedule.adopt`: its id,
/// the host whose limits and holds it shares, and its persisted state.
public struct PollResource: Sendable, Equatable {
    /// The resource's identity: stable across lists and restarts.
    public var id: Int64
    /// The key of the host it is fetched from (the driver chooses: `host:port`,
    /// or a group of hosts that throttle together). Limits and `Retry-After`
    /// holds apply per key.
    public var host: String
    /// What was persisted for it (empty for a resource never polled). Read only
    /// when the id is new to the schedule.
    public var state: PollState

    /// A resource `id` on `host`, with its persisted `state`.
    public init(id: Int64, host: String, state: PollState = PollState()) {
        self.id = id
        self.host = host
        self.state = state
    }
}
