/// What a `PollSchedule` asks its driver to do, once the driver's lock is released.
public enum PollAction: Sendable, Equatable {
    /// Fetch the resource; answer with `finished` when it ends, whatever happened.
    case fetch(Int64)
    /// Call `tick` at this wall-clock time (ms). Each list of actions ends with
    /// at most one, which replaces any earlier: a list without one means no
    /// time needs a tick (only a `finished` or an `adopt` can start more).
    case wake(at: Int64)
}
