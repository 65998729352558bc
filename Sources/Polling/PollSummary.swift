/// The schedule as the operator sees it: counts over every resource, and the
/// hosts held now. Read from the schedule itself, so each number is kept once.
public struct PollSummary: Sendable, Equatable {
    /// Resources in the schedule.
    public var resources = 0
    /// Fetches in flight, in both lanes (with those of resources dropped since they started).
    public var fetching = 0
    /// Of those, the ones in the slow lane (as of the last call that changed the schedule).
    public var slow = 0
    /// Resources due but not started: their host is held or at its limit, or `inAll` is reached.
    public var waiting = 0
    /// Resources whose last poll failed (throttled with `503` included).
    public var failing = 0
    /// Of those, the ones failing for longer than `PollRules.failingFor`.
    public var failingForDays = 0
    /// Hosts held by a `Retry-After` (or a `429`/`503` without one), and until when.
    public var heldHosts: [String: Int64] = [:]

    /// Empty counts.
    public init() {}
}

/// One resource as the operator sees it: its state (next poll, failures,
/// last fetch and result) and what it is doing now.
public struct PollStatus: Sendable, Equatable {
    /// What the resource is doing.
    public enum Activity: Sendable, Equatable {
        /// Waiting for its next poll.
        case scheduled
        /// Due, but its host is held or at its limit, or `inAll` is reached.
        case waiting
        /// Being fetched since then (ms).
        case fetching(since: Int64)
        /// Being fetched since then, in the slow lane.
        case fetchingSlowly(since: Int64)
    }

    /// How the resource has been answering.
    public enum Health: Sendable, Equatable {
        /// Its last poll reached it and it answered (or it was never polled).
        case ok
        /// Failing since then (ms).
        case failing(since: Int64)
        /// Failing since then, for longer than `PollRules.failingFor`: still polled, at the backoff's ceiling.
        case failingForDays(since: Int64)
    }

    /// The resource's id.
    public var id: Int64
    /// The host key it is polled under.
    public var host: String
    /// Its persisted state (next poll, failures, last fetch and result); `nextPollAt` is always set.
    public var state: PollState
    /// What it is doing now.
    public var activity: Activity
    /// How it has been answering.
    public var health: Health
    /// When its host's hold ends, while it is held.
    public var hostHeldUntil: Int64?
}

extension PollSchedule {
    /// The counts at `now`. Walks every resource: for the operator's views,
    /// not for every event.
    public func summary(now: Int64) -> PollSummary {
        var summary = PollSummary()
        summary.resources = resources.count
        summary.fetching = flights.count
        summary.slow = slowCount
        for (id, resource) in resources {
            if case .waiting = activity(of: id, resource, now: now) { summary.waiting += 1 }
            switch health(of: resource.state, now: now) {
            case .ok: break
            case .failing: summary.failing += 1
            case .failingForDays:
                summary.failing += 1
                summary.failingForDays += 1
            }
        }
        for (name, host) in hosts where host.heldUntil > now { summary.heldHosts[name] = host.heldUntil }
        return summary
    }

    /// The resource `id` at `now`, or `nil` when it is not in the schedule.
    public func status(of id: Int64, now: Int64) -> PollStatus? {
        guard let resource = resources[id] else { return nil }
        let held = hosts[resource.host].map(\.heldUntil).flatMap { $0 > now ? $0 : nil }
        return PollStatus(
            id: id, host: resource.host, state: resource.state, activity: activity(of: id, resource, now: now),
            health: health(of: resource.state, now: now), hostHeldUntil: held)
    }

    private func activity(of id: Int64, _ resource: Resource, now: Int64) -> PollStatus.Activity {
        if resource.fetching, let flight = flights[id] {
            return flight.slow ? .fetchingSlowly(since: flight.startedAt) : .fetching(since: flight.startedAt)
        }
        return resource.due <= now ? .waiting : .scheduled
    }

    private func health(of state: PollState, now: Int64) -> PollStatus.Health {
        guard state.failures > 0, let since = state.failingSince else { return .ok }
        return now - since > rules.failingFor ? .failingForDays(since: since) : .failing(since: since)
    }
}
