import CoreMetrics
import WarmfeedCore

/// The thumbnails' events as swift-metrics counters and timers, recorded where
/// each happens (a reader's request decided, an original fetched, a thumbnail
/// resized), through whatever factory the server exports with (Prometheus at
/// `/metrics`). What the cache holds now is not here: `/metrics` sets its
/// gauges from the stats this cache publishes.
struct ThumbnailMetrics: Sendable {
    private let hits, misses, coalesced, negativeHits, evictions, failures: Counter
    private let diskHits, sharedHits, resizes, originFetches, originErrors: Counter
    private let originLatency, thumbnailLatency: Timer

    init(factory: any MetricsFactory) {
        func counter(_ name: String) -> Counter {
            Counter(label: "warmfeed_thumbnail_\(name)_total", factory: factory)
        }
        (hits, misses, coalesced, negativeHits) = (counter("hits"), counter("misses"), counter("coalesced"), counter("negative_hits"))
        (evictions, failures, diskHits) = (counter("evictions"), counter("failures"), counter("disk_hits"))
        (sharedHits, resizes) = (counter("shared_hits"), counter("resizes"))
        (originFetches, originErrors) = (counter("origin_fetches"), counter("origin_errors"))
        originLatency = Timer(label: "warmfeed_origin_fetch_seconds", preferredDisplayUnit: .seconds, factory: factory)
        thumbnailLatency = Timer(label: "warmfeed_thumbnail_resize_seconds", preferredDisplayUnit: .seconds, factory: factory)
    }

    /// A reader's thumbnail request was decided.
    func decided(_ decision: ThumbnailService.State.Decision) {
        switch decision {
        case .hit: hits.increment()
        case .failedRecently: negativeHits.increment()
        case .joined: coalesced.increment()
        case .started: misses.increment()
        }
    }

    /// `count` readers were served from memory without the machine (counted per thread, told at a scrape).
    func hit(_ count: Int) { hits.increment(by: count) }

    /// `count` thumbnails left memory to keep it inside its budget.
    func evicted(_ count: Int) { evictions.increment(by: count) }

    /// `count` thumbnail jobs failed (and are remembered as failed).
    func failed(_ count: Int) { failures.increment(by: count) }

    /// A lookup tier had the thumbnail.
    func tierHit(_ tier: String) {
        switch tier {
        case "disk": diskHits.increment()
        case "shared": sharedHits.increment()
        default: break
        }
    }

    /// An original arrived from the origin after `seconds`.
    func originFetched(seconds: Double) {
        originFetches.increment()
        originLatency.recordNanoseconds(Int64(max(0, seconds) * 1e9))
    }

    /// The origin failed to give an original.
    func originFailed() {
        originFetches.increment()
        originErrors.increment()
    }

    /// A thumbnail was made in `seconds`.
    func resized(seconds: Double) {
        resizes.increment()
        thumbnailLatency.recordNanoseconds(Int64(max(0, seconds) * 1e9))
    }
}
