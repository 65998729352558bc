import WarmfeedCore

/// A consistent copy of the thumbnail cache's numbers.
struct ThumbnailSnapshot: Sendable {
    var counters: ThumbnailService.State.Counters
    var entries: Int
    var bytes: Int
    var budget: Int
    var negative: Int
    var inFlight: Int
    var originalBytes: Int
    var disk: ThumbnailDiskTier.Usage
    var originalsOnDisk: ThumbnailDiskTier.Usage
    var originLatency: LatencyWindow
    var thumbnailLatency: LatencyWindow

    /// Hits over all requests that reached a decision (hits, misses, joins, negative hits).
    var hitRatio: Double? {
        let total = counters.hits + counters.misses + counters.coalesced + counters.negativeHits
        return total == 0 ? nil : Double(counters.hits) / Double(total)
    }
}
