import WarmfeedCore

/// What the thumbnail cache can be asked without an event: what it holds,
/// what runs, what is remembered (for the routes, pre-warm and the admin view).
extension ThumbnailCacheState {
    /// Whether `key` is in memory, without counting a hit or touching its recency.
    public func isCached(_ key: ThumbnailKey) -> Bool { memory.contains(key) }

    /// Whether a job for `key` is running.
    public func isInFlight(_ key: ThumbnailKey) -> Bool { jobs[key] != nil }

    /// Entries and bytes in memory, failures remembered, jobs running, and
    /// the bytes of originals: kept for a later variant plus waiting for
    /// libvips (an original in both is counted twice, erring high).
    public var usage: (entries: Int, bytes: Int, budget: Int, negative: Int, inFlight: Int, originalBytes: Int) {
        let kept = memory.usage
        let beingKept = keeping.values.reduce(0) { $0 + $1.count }
        return (kept.count, kept.cost, memory.capacity, failed.count, jobs.count, originals.totalCost + pipeline.heldBytes + beingKept)
    }

    /// Bytes of originals waiting for libvips, and fetches held back until they shrink.
    public var waitingForResize: (bytes: Int, deferredFetches: Int) {
        (pipeline.heldBytes, pipeline.deferredCount)
    }

    /// Whether a resize holds `picture`'s original now: when none does,
    /// the service lets the bytes of the body it fetched go from its allowance.
    public func holdsOriginal(of picture: Picture) -> Bool {
        pipeline.holds(picture)
    }

    /// Drops failures whose time is up and that have been quiet since for `negativeTTL`.
    public mutating func purgeExpired(now: Double) {
        failed.purgeExpired(now: now)
    }

    /// How long `key` is remembered as failed from `now`, when it is (for tests and the admin view).
    public func remembered(_ key: ThumbnailKey, now: Double) -> Double? {
        failed.remaining(key, now: now)
    }
}
