import CoreMetrics
import FeedPages
import Prometheus
import WarmfeedCore

/// The Prometheus view of the cache (`GET /metrics`), through swift-metrics.
///
/// Counters and timers are recorded where the event happens (a hit decided, an
/// original fetched, a thumbnail resized, a pre-warm job ended); gauges (what
/// the cache holds now) are set from a snapshot when `/metrics` is scraped.
/// Each app has its own registry (no global bootstrap), so several servers in
/// one process (the tests) keep their numbers apart.
final class WarmfeedMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    /// Where the parts make their counters and timers (`ThumbnailMetrics`,
    /// `PrewarmMetrics`), into `registry`.
    let factory: PrometheusMetricsFactory
    private let gauges: [String: CoreMetrics.Gauge]

    init() {
        let factory = PrometheusMetricsFactory(registry: registry)
        self.factory = factory
        var gauges: [String: CoreMetrics.Gauge] = [:]
        for name in [
            "memory_entries", "memory_bytes", "memory_budget_bytes", "disk_entries", "disk_bytes", "disk_budget_bytes",
            "negative_entries", "in_flight", "prewarm_queued", "prewarm_running", "page_cache_bytes", "hit_ratio",
            "origin_latency_p50_seconds", "origin_latency_p99_seconds", "thumbnail_latency_p50_seconds",
            "thumbnail_latency_p99_seconds", "uptime_seconds", "connections_held", "origin_busy", "origin_cancelled",
            "connections_shed_slow_head", "connections_closed_idle", "connections_shed_for_room", "origin_retried", "connections_refused",
            "connections_malformed", "disk_index_bytes", "disk_index_budget_bytes", "resident_bytes",
            "page_cache_hits", "page_cache_misses", "page_cache_not_kept", "store_up", "store_revision",
            "shared_up", "shared_keys", "shared_bytes", "shared_claims_won", "shared_claims_waited",
            "shared_claims_taken_over", "shared_claims_unavailable", "shared_pages_warmed_elsewhere", "shared_errors",
            "shared_latency_p50_seconds", "shared_latency_p99_seconds",
        ] {
            gauges[name] = CoreMetrics.Gauge(label: "warmfeed_\(name)", factory: factory)
        }
        self.gauges = gauges
    }

    // MARK: Scrapes

    /// Sets the gauges (what is held now) from `stats`.
    func setGauges(from stats: CacheStats) {
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
            "store_up": stats.store.answering ? 1 : 0, "store_revision": Double(stats.store.revision),
            "origin_busy": Double(stats.origin.busy),
            "origin_cancelled": Double(stats.origin.cancelled),
            "origin_retried": Double(stats.origin.retried),
            "connections_held": Double(stats.connections.held),
            "connections_shed_slow_head": Double(stats.connections.slowHeads),
            "connections_closed_idle": Double(stats.connections.idleClosed),
            "connections_shed_for_room": Double(stats.connections.madeRoom),
            "connections_refused": Double(stats.connections.refused),
            "connections_malformed": Double(stats.connections.malformed),
            "page_cache_hits": Double(stats.pageHits),
            "page_cache_misses": Double(stats.pageMisses),
            "page_cache_not_kept": Double(stats.pageNotKept),
            "disk_index_bytes": Double(stats.memoryUse.diskIndexBytes),
            "disk_index_budget_bytes": Double(stats.memoryUse.diskIndexBudgetBytes),
            "resident_bytes": stats.memoryUse.rssBytes.map(Double.init),
        ]
        var all = values
        if let shared = stats.shared {
            let counts: [String: Int?] = [
                "shared_keys": shared.keys, "shared_bytes": shared.bytes, "shared_claims_won": shared.claimsWon,
                "shared_claims_waited": shared.claimsWaited, "shared_claims_taken_over": shared.claimsTakenOver,
                "shared_claims_unavailable": shared.claimsUnavailable, "shared_pages_warmed_elsewhere": shared.pagesWarmedElsewhere,
                "shared_errors": shared.errors,
            ]
            for (name, count) in counts { all[name] = count.map(Double.init) }
            all["shared_up"] = shared.up ? 1 : 0
            all["shared_latency_p50_seconds"] = shared.latency.p50Ms.map { $0 / 1000 }
            all["shared_latency_p99_seconds"] = shared.latency.p99Ms.map { $0 / 1000 }
        }
        for (name, value) in all {
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
