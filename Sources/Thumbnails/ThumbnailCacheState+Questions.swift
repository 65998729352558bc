import WarmfeedCore

/// What the thumbnail cache can be asked without an event: what it holds,
/// what runs, what is remembered (for the routes, pre-warm and the admin view).
extension ThumbnailCacheState {
    /// A reader on a dense screen was served a 2x at `now` from memory,
    /// without this machine (see `memory`): pre-warm keeps making 2x.
    public mutating func denseRequested(at now: Double) {
        lastDenseRequest = max(lastDenseRequest ?? now, now)
    }

    /// Whether `key` is in memory, without counting a hit or touching its recency.
    public func isCached(_ key: ThumbnailKey) -> Bool { memory.contains(key) }

    /// Whether a job for `key` is running.
    public func isInFlight(_ key: ThumbnailKey) -> Bool { jobs[key] != nil }

    /// The scales pre-warm makes at `now`: 1x always, 2x only while readers on
    /// dense screens are about (one asked for a 2x within `denseDemandWindow`).
    /// A DPR-1 audience never pays for 2x work it would not ask for.
    public func scalesInDemand(now: Double) -> [Int] {
        guard let last = lastDenseRequest, now - last < denseDemandWindow else { return [1] }
        return ThumbnailVariant.scales
    }

    /// Entries and bytes in memory, failures remembered, jobs running, and
    /// the bytes of originals: kept for a later variant plus waiting for
    /// libvips (an original in both is counted twice, erring high).
    public var usage: (entries: Int, bytes: Int, budget: Int, negative: Int, inFlight: Int, originalBytes: Int) {
        let kept = memory.usage
        return (kept.count, kept.cost, memory.capacity, failed.count, jobs.count, originals.totalCost + pipeline.heldBytes)
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
