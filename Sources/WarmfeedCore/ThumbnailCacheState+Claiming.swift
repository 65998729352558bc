/// The steps between the last tier's miss and the origin: reading the item
/// a reader's job came without, and the claim on making it in a cluster.
extension ThumbnailCacheState {
    /// The item `key` is a thumbnail of was read (see `Action.readItem`).
    public mutating func itemRead(_ key: ThumbnailKey, _ read: ItemRead) -> [Action] {
        guard let job = jobs[key], case .readingItem = job.stage else { return [] }
        switch read {
        case .found(let item):
            jobs[key]!.item = item
            jobs[key]!.stage = .lookingUp(tier: lookupTiers)
            return nextStep(for: key)
        case .noSuchItem, .placeholder:
            // Nothing was asked of the origin: nothing is remembered, and the next request reads again.
            jobs[key] = nil
            let answer: Answer = if case .noSuchItem = read { .noSuchItem } else { .placeholder }
            return job.waiters.isEmpty ? [] : [.answer(job.waiters.map(\.waiter), answer)]
        }
    }

    /// The claim on making `key` came to `claim` (see `Action.claim`).
    public mutating func claimAnswered(_ key: ThumbnailKey, _ claim: Claim, now: Double) -> [Action] {
        guard let job = jobs[key], case .claiming = job.stage else { return [] }
        switch claim {
        case .won:
            counters.claimsWon += 1
            jobs[key]!.claimHeld = true
        case .unavailable:
            counters.claimsUnavailable += 1
        case .found(let made):
            counters.claimsWaited += 1
            // The node that made it wrote every tier it shares; this node's own tiers above get it.
            return keep(key, made, storeInto: Array(0..<(claimTier ?? 0)))
        case .failed(let remaining):
            counters.claimsWaited += 1
            counters.sharedFailures += 1
            return fail(key, .origin, now: now, remembered: remaining)
        }
        jobs[key]!.stage = .lookingUp(tier: lookupTiers)
        return nextStep(for: key)
    }
}
