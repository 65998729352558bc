import CoreMetrics

/// The thumbnails' two timings as swift-metrics timers (Prometheus
/// histograms at `/metrics`): an original's fetch and a thumbnail's resize,
/// recorded where each ends. What is counted (hits, misses, fetches,
/// resizes…) is counted once, by the machine, and `/metrics` reads it from
/// the stats this cache publishes, as it reads what the cache holds now.
struct ThumbnailMetrics: Sendable {
    private let originLatency, thumbnailLatency: Timer

    init(factory: any MetricsFactory) {
        originLatency = Timer(label: "warmfeed_origin_fetch_seconds", preferredDisplayUnit: .seconds, factory: factory)
        thumbnailLatency = Timer(label: "warmfeed_thumbnail_resize_seconds", preferredDisplayUnit: .seconds, factory: factory)
    }

    /// An original arrived from the origin after `seconds`.
    func originFetched(seconds: Double) {
        originLatency.recordNanoseconds(Int64(max(0, seconds) * 1e9))
    }

    /// A thumbnail was made in `seconds`.
    func resized(seconds: Double) {
        thumbnailLatency.recordNanoseconds(Int64(max(0, seconds) * 1e9))
    }
}
