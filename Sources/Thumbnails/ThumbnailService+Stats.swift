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

/// The thumbnails' sections of the operator's views: the tiers, the counts of
/// readers' requests, the origin and libvips, and a cluster's shared tier
/// (what Redis holds, with the claims this cache counted).
extension ThumbnailService: StatsPublisher {
    package func publish(into stats: inout CacheStats) {
        let thumbs = snapshot
        let counters = thumbs.counters
        func tier(_ usage: ThumbnailDiskTier.Usage) -> CacheStats.Tier {
            var tier = CacheStats.Tier()
            (tier.entries, tier.bytes, tier.budgetBytes) = (usage.entries, usage.bytes, usage.budget)
            return tier
        }
        func hits(in name: String) -> Int {
            tiers.firstIndex { $0.name == name }.map { counters.tierHits[$0] } ?? 0
        }
        (stats.memory.entries, stats.memory.bytes, stats.memory.budgetBytes) = (thumbs.entries, thumbs.bytes, thumbs.budget)
        stats.disk = tier(thumbs.disk)
        stats.originals.disk = tier(thumbs.originalsOnDisk)
        (stats.originals.fromDisk, stats.originals.fromMemory) = (counters.originalsFromDisk, counters.originalReuses)
        stats.diskCorruptFilesReplaced = thumbs.disk.corrupt
        stats.diskMaxEntries = thumbs.disk.maxEntries
        (stats.hits, stats.misses, stats.hitRatio, stats.coalesced) = (counters.hits, counters.misses, thumbs.hitRatio, counters.coalesced)
        (stats.evictions, stats.diskHits, stats.sharedHits) = (counters.evictions, hits(in: "disk"), hits(in: "shared"))
        (stats.negativeEntries, stats.negativeHits, stats.failures) = (thumbs.negative, counters.negativeHits, counters.failures)
        stats.inFlight = thumbs.inFlight
        stats.resizes = counters.resizes
        let fetched = fetcher.stats
        (stats.origin.fetches, stats.origin.errors, stats.origin.inFlight) = (counters.originFetches, counters.originErrors, fetched.inFlight)
        (stats.origin.busy, stats.origin.cancelled, stats.origin.retried) = (fetched.busy, fetched.cancelled, fetched.retriedOnNewConnection)
        stats.origin.latency = CacheStats.Latency(thumbs.originLatency)
        stats.thumbnailLatency = CacheStats.Latency(thumbs.thumbnailLatency)
        stats.memoryUse.thumbnailsBytes = thumbs.bytes
        stats.memoryUse.originalsBytes = thumbs.originalBytes
        stats.memoryUse.diskIndexBytes = thumbs.disk.indexBytes
        stats.memoryUse.diskIndexBudgetBytes = thumbs.disk.indexBudget
        stats.memoryUse.originalsIndexBytes = thumbs.originalsOnDisk.indexBytes
        if var shared = tiers.lazy.compactMap({ $0 as? SharedTier }).first?.snapshot {
            (shared.claimsWon, shared.claimsWaited, shared.claimsUnavailable) = (counters.claimsWon, counters.claimsWaited, counters.claimsUnavailable)
            (shared.ownerAsks, shared.ownerUnreachable) = (counters.ownerAsks, counters.ownerUnreachable)
            stats.shared = shared
        }
    }
}
