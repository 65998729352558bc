import CoreMetrics
import Prometheus
import Synchronization
import WarmfeedCore

/// The Prometheus view of the cache (`GET /metrics`), through swift-metrics.
///
/// Each number is counted once, by the part it belongs to (the thumbnail
/// machine, pre-warm's planner, the page cache, the server's connections),
/// and read from the stats they publish when `/metrics` is scraped: gauges
/// (what is held now) are set, counters (what only rises) are raised by the
/// difference, so they are Prometheus counters, not gauges of running
/// counts. Only the two timings are recorded where they happen (an
/// original's fetch, a thumbnail's resize: histograms).
/// Each app has its own registry (no global bootstrap), so several servers in
/// one process (the tests) keep their numbers apart.
package final class WarmfeedMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    /// Where the thumbnails record their two timers (`ThumbnailMetrics`), into `registry`.
    package let factory: PrometheusMetricsFactory
    private let gauges: [(gauge: CoreMetrics.Gauge, value: @Sendable (CacheStats) -> Double?)]
    private let counters: [(counter: CoreMetrics.Counter, value: @Sendable (CacheStats) -> Int?)]
    /// Each counter's value at the scrape before (scrapes may come at once: one at a time here).
    private let counted: Mutex<[Int]>

    /// Each gauge (a level now), named once, with where its value is read in
    /// the stats (nil: not set on this scrape).
    static let gaugeValues: [(name: String, value: @Sendable (CacheStats) -> Double?)] = [
        ("memory_entries", { Double($0.memory.entries) }), ("memory_bytes", { Double($0.memory.bytes) }),
        ("memory_budget_bytes", { Double($0.memory.budgetBytes) }), ("disk_entries", { Double($0.disk.entries) }),
        ("disk_bytes", { Double($0.disk.bytes) }), ("disk_budget_bytes", { Double($0.disk.budgetBytes) }),
        ("negative_entries", { Double($0.negativeEntries) }), ("in_flight", { Double($0.inFlight) }),
        ("prewarm_queued", { Double($0.prewarm.queued) }), ("prewarm_running", { Double($0.prewarm.running) }),
        ("prewarm_avif_pages_waiting", { Double($0.prewarm.avifPagesWaiting) }),
        ("page_cache_bytes", { Double($0.pages.bytes) }), ("hit_ratio", { $0.hitRatio }),
        ("origin_latency_p50_seconds", { seconds($0.origin.latency.p50Ms) }),
        ("origin_latency_p99_seconds", { seconds($0.origin.latency.p99Ms) }),
        ("thumbnail_latency_p50_seconds", { seconds($0.thumbnailLatency.p50Ms) }),
        ("thumbnail_latency_p99_seconds", { seconds($0.thumbnailLatency.p99Ms) }),
        ("uptime_seconds", { $0.uptimeSeconds }),
        ("store_up", { $0.store.answering ? 1 : 0 }), ("store_revision", { Double($0.store.revision) }),
        ("connections_held", { Double($0.connections.held) }), ("connections_waiting", { Double($0.connections.waiting) }),
        ("disk_index_bytes", { Double($0.memoryUse.diskIndexBytes) }), ("disk_index_budget_bytes", { Double($0.memoryUse.diskIndexBudgetBytes) }),
        ("resident_bytes", { $0.memoryUse.rssBytes.map(Double.init) }),
        ("decode_budget_bytes", { Double($0.decode.budgetBytes) }), ("decode_in_use_bytes", { Double($0.decode.inUseBytes) }),
        ("decode_peak_bytes", { Double($0.decode.peakBytes) }), ("decode_running", { Double($0.decode.running) }),
        ("decode_waiting", { Double($0.decode.waiting) }),
        ("origin_body_bytes", { Double($0.origin.bodyBytes) }), ("origin_body_budget_bytes", { Double($0.origin.bodyBudgetBytes) }),
        // A cluster's shared tier: set only with `--redis`.
        ("shared_up", { $0.shared.map { $0.up ? 1 : 0 } }), ("shared_keys", { $0.shared?.keys.map(Double.init) }),
        ("shared_bytes", { $0.shared?.bytes.map(Double.init) }),
        ("shared_latency_p50_seconds", { seconds($0.shared?.latency.p50Ms) }), ("shared_latency_p99_seconds", { seconds($0.shared?.latency.p99Ms) }),
    ]

    /// Each number that only rises (counted since the start), named once, with
    /// where it is read in the stats: a Prometheus counter, raised at each
    /// scrape by what it rose since the one before (nil: not counted on this
    /// node), so `rate()` reads it as the counter it is.
    static let counterValues: [(name: String, value: @Sendable (CacheStats) -> Int?)] = [
        // Readers' thumbnail requests as the thumbnail machine decided them, and what its jobs did.
        ("thumbnail_hits_total", { $0.hits }), ("thumbnail_misses_total", { $0.misses }), ("thumbnail_coalesced_total", { $0.coalesced }),
        ("thumbnail_negative_hits_total", { $0.negativeHits }), ("thumbnail_evictions_total", { $0.evictions }),
        ("thumbnail_failures_total", { $0.failures }), ("thumbnail_disk_hits_total", { $0.diskHits }),
        ("thumbnail_shared_hits_total", { $0.sharedHits }), ("thumbnail_resizes_total", { $0.resizes }),
        ("thumbnail_origin_fetches_total", { $0.origin.fetches }), ("thumbnail_origin_errors_total", { $0.origin.errors }),
        // Pre-warm's jobs, as its planner counted them.
        ("thumbnail_prewarm_done_total", { $0.prewarm.done }), ("thumbnail_prewarm_cancelled_total", { $0.prewarm.cancelled }),
        ("thumbnail_prewarm_dropped_total", { $0.prewarm.dropped }),
        ("origin_busy", { $0.origin.busy }), ("origin_cancelled", { $0.origin.cancelled }),
        ("origin_retried", { $0.origin.retried }), ("origin_refused", { $0.origin.refused }),
        ("origin_body_pauses", { $0.origin.bodyPauses }), ("origin_body_shed", { $0.origin.bodyShed }),
        ("avif_fallbacks", { $0.avifFallbacks }), ("prewarm_avif_pages_dropped", { $0.prewarm.avifPagesDropped }),
        ("connections_shed_slow_head", { $0.connections.slowHeads }), ("connections_closed_idle", { $0.connections.idleClosed }),
        ("connections_shed_for_room", { $0.connections.madeRoom }), ("connections_refused", { $0.connections.refused }),
        ("connections_malformed", { $0.connections.malformed }), ("connections_waits_shed", { $0.connections.waitsShed }),
        ("connections_waits_late", { $0.connections.waitsLate }),
        ("page_cache_hits", { $0.pageHits }), ("page_cache_misses", { $0.pageMisses }), ("page_cache_not_kept", { $0.pageNotKept }),
        ("decode_refused", { $0.decode.refused }), ("decode_timed_out", { $0.decode.timedOut }),
        // Stored rows a page found corrupt, served from their items and prepared again (issue 34).
        ("rows_repaired", { $0.rows?.repaired }), ("rows_prepared", { $0.rows?.prepared }),
        // A cluster's shared tier: counted only with `--redis`.
        ("shared_claims_won", { $0.shared?.claimsWon }), ("shared_claims_waited", { $0.shared?.claimsWaited }),
        ("shared_claims_taken_over", { $0.shared?.claimsTakenOver }), ("shared_claims_unavailable", { $0.shared?.claimsUnavailable }),
        ("shared_pages_warmed_elsewhere", { $0.shared?.pagesWarmedElsewhere }), ("shared_errors", { $0.shared?.errors }),
        // What a node refused to believe of Redis and its peers (issue 34).
        ("shared_owners_refused", { $0.shared?.ownersRefused }), ("shared_bad_values", { $0.shared?.badValues }),
        ("shared_owner_answers_refused", { $0.shared?.ownerAnswersRefused }), ("shared_lifetimes_capped", { $0.shared?.lifetimesCapped }),
    ]

    private static func seconds(_ milliseconds: Double?) -> Double? { milliseconds.map { $0 / 1000 } }

    package init() {
        let factory = PrometheusMetricsFactory(registry: registry)
        self.factory = factory
        gauges = Self.gaugeValues.map { (CoreMetrics.Gauge(label: "warmfeed_\($0.name)", factory: factory), $0.value) }
        counters = Self.counterValues.map { (CoreMetrics.Counter(label: "warmfeed_\($0.name)", factory: factory), $0.value) }
        counted = Mutex([Int](repeating: 0, count: Self.counterValues.count))
    }

    // MARK: Scrapes

    /// Sets the gauges (what is held now) from `stats`, and raises each
    /// counter by what its count rose since the scrape before. A count that
    /// went down (a part started again) raises nothing and is the new base.
    func record(from stats: CacheStats) {
        for (gauge, value) in gauges {
            if let value = value(stats) { gauge.record(value) }
        }
        counted.withLock { last in
            for (index, (counter, value)) in counters.enumerated() {
                guard let now = value(stats) else { continue }
                if now > last[index] { counter.increment(by: Int64(now - last[index])) }
                last[index] = now
            }
        }
    }

    /// The Prometheus text exposition.
    func text() -> [UInt8] {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return buffer
    }
}
