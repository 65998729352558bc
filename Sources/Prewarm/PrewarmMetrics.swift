import CoreMetrics
import FeedPages

/// Pre-warm's events as swift-metrics counters: jobs done, cancelled (no
/// reader wanted them any more) and dropped (no room), through whatever
/// factory the server exports with (Prometheus at `/metrics`).
struct PrewarmMetrics: Sendable {
    private let done, cancelled, dropped: Counter

    init(factory: any MetricsFactory) {
        func counter(_ name: String) -> Counter {
            Counter(label: "warmfeed_thumbnail_prewarm_\(name)_total", factory: factory)
        }
        (done, cancelled, dropped) = (counter("done"), counter("cancelled"), counter("dropped"))
    }

    /// The planner counted jobs in one decision: what moved from `before` to `after`.
    func counted(from before: PrewarmPlanner<PageQuery>.Counters, to after: PrewarmPlanner<PageQuery>.Counters) {
        if after.done > before.done { done.increment(by: after.done - before.done) }
        if after.cancelled > before.cancelled { cancelled.increment(by: after.cancelled - before.cancelled) }
        if after.dropped > before.dropped { dropped.increment(by: after.dropped - before.dropped) }
    }
}
