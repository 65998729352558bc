import CoreMetrics
import Prometheus
import Synchronization

/// The Prometheus view of the cache (`GET /metrics`), through swift-metrics.
///
/// Each app has its own registry (no global bootstrap), so several servers in
/// one process (the tests) keep their numbers apart. Counters follow the cache's
/// own counters; gauges are set from each sample.
final class WarmfeedMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let counters: [String: CoreMetrics.Counter]
    private let gauges: [String: CoreMetrics.Gauge]
    private let last = Mutex([String: Int]())

    init() {
        let factory = PrometheusMetricsFactory(registry: registry)
        var counters: [String: CoreMetrics.Counter] = [:]
        for name in ["hits", "misses", "coalesced", "evictions", "disk_hits", "negative_hits", "failures",
                     "origin_fetches", "origin_errors", "prewarm_done", "prewarm_cancelled", "prewarm_dropped"] {
            counters[name] = CoreMetrics.Counter(label: "warmfeed_thumbnail_\(name)_total", factory: factory)
        }
        var gauges: [String: CoreMetrics.Gauge] = [:]
        for name in ["memory_entries", "memory_bytes", "memory_budget_bytes", "disk_entries", "disk_bytes", "disk_budget_bytes",
                     "negative_entries", "in_flight", "prewarm_queued", "prewarm_running", "page_cache_bytes", "hit_ratio",
                     "origin_latency_p50_seconds", "origin_latency_p99_seconds", "thumbnail_latency_p50_seconds",
                     "thumbnail_latency_p99_seconds", "uptime_seconds"] {
            gauges[name] = CoreMetrics.Gauge(label: "warmfeed_\(name)", factory: factory)
        }
        self.counters = counters
        self.gauges = gauges
    }

    /// Brings the metrics up to `stats`.
    func update(from stats: CacheStats) {
        let totals: [String: Int] = [
            "hits": stats.hits, "misses": stats.misses, "coalesced": stats.coalesced, "evictions": stats.evictions,
            "disk_hits": stats.diskHits, "negative_hits": stats.negativeHits, "failures": stats.failures,
            "origin_fetches": stats.origin.fetches, "origin_errors": stats.origin.errors,
            "prewarm_done": stats.prewarm.done, "prewarm_cancelled": stats.prewarm.cancelled, "prewarm_dropped": stats.prewarm.dropped,
        ]
        last.withLock { last in
            for (name, total) in totals {
                let delta = total - (last[name] ?? 0)
                if delta > 0 { counters[name]?.increment(by: delta) }
                last[name] = total
            }
        }
        let values: [String: Double?] = [
            "memory_entries": Double(stats.memory.entries), "memory_bytes": Double(stats.memory.bytes),
            "memory_budget_bytes": Double(stats.memory.budgetBytes), "disk_entries": Double(stats.disk.entries),
            "disk_bytes": Double(stats.disk.bytes), "disk_budget_bytes": Double(stats.disk.budgetBytes),
            "negative_entries": Double(stats.negativeEntries), "in_flight": Double(stats.inFlight),
            "prewarm_queued": Double(stats.prewarm.queued), "prewarm_running": Double(stats.prewarm.running),
            "page_cache_bytes": Double(stats.pages.bytes), "hit_ratio": stats.hitRatio,
            "origin_latency_p50_seconds": stats.origin.latency.p50Ms.map { $0 / 1000 },
            "origin_latency_p99_seconds": stats.origin.latency.p99Ms.map { $0 / 1000 },
            "thumbnail_latency_p50_seconds": stats.thumbnailLatency.p50Ms.map { $0 / 1000 },
            "thumbnail_latency_p99_seconds": stats.thumbnailLatency.p99Ms.map { $0 / 1000 },
            "uptime_seconds": stats.uptimeSeconds,
        ]
        for (name, value) in values {
            if let value { gauges[name]?.record(value) }
        }
    }

    /// The Prometheus text exposition.
    func text() -> [UInt8] {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return buffer
    }
}
