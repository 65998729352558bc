import WarmfeedCore

/// The steps between the last tier's miss and a resize: reading the item a
/// reader's job came without, then finding the item's original — on disk,
/// with its owner in a cluster, or from the origin — once for all its variants.
extension ThumbnailCacheState {
    /// The item `key` is a thumbnail of was read (see `Action.readItem`).
    public mutating func itemRead(_ key: ThumbnailKey, _ read: ItemRead) -> [Action] {
        guard let job = jobs[key], case .readingItem = job.stage else { return [] }
        switch read {
        case .found(let item):
            jobs[key]?.item = item
            jobs[key]?.stage = .lookingUp(tier: lookupTiers)
            return nextStep(for: key)
        case .noSuchItem, .placeholder:
            // Nothing was asked of the origin: nothing is remembered, and the next request reads again.
            jobs[key] = nil
            let answer: Answer = if case .noSuchItem = read { .noSuchItem } else { .placeholder }
            return job.waiters.isEmpty ? [] : [.answer(job.waiters.map(\.waiter), answer)]
        }
    }

    /// The original of item `itemID` was read from disk (see `Action.readOriginal`): its bytes, or nil.
    public mutating func originalRead(itemID: Int64, _ bytes: [UInt8]?, now: Double) -> [Action] {
        guard let job = originalJobs[itemID], job.stage == .reading else { return [] }
        if let bytes {
            counters.originalsFromDisk += 1
            return originalFound(itemID: itemID, bytes)
        }
        return startFetch(itemID)
    }

    /// The cluster's claim on fetching item `itemID`'s original came to `claim` (see `Action.claimOriginal`).
    public mutating func originalClaimAnswered(itemID: Int64, _ claim: OriginalClaim, now: Double) -> [Action] {
        guard let job = originalJobs[itemID], job.stage == .claiming else { return [] }
        switch claim {
        case .won:
            counters.claimsWon += 1
            originalJobs[itemID]?.claimHeld = true
            return fetch(itemID)
        case .unavailable:
            counters.claimsUnavailable += 1
            return fetch(itemID)
        case .owner(let url) where url == job.unreachableOwner:
            // Still named after it did not answer (another node wrote it back): fetch it here.
            return fetch(itemID)
        case .owner(let url):
            // The node that fetched it makes each variant from it: one fetch for the cluster.
            counters.claimsWaited += 1
            originalJobs[itemID] = nil
            pipeline.fetchEnded()
            let asks: [Action] = job.waiting.compactMap { key in
                guard let waiting = jobs[key] else { return nil }
                jobs[key]?.stage = .askingOwner
                counters.ownerAsks += 1
                return .askOwner(key, owner: url, urgent: waiting.urgent)
            }
            return asks + startDeferredFetches()
        case .failed(let remaining):
            counters.claimsWaited += 1
            counters.sharedFailures += 1
            originalJobs[itemID] = nil
            pipeline.fetchEnded()
            return job.waiting.flatMap { fail($0, .origin, now: now, remembered: remaining) } + startDeferredFetches()
        }
    }

    /// The original of item `itemID` arrived from the origin (or failed); `seconds` is what the fetch took.
    public mutating func originalArrived(itemID: Int64, _ result: Result<[UInt8], Failure>, seconds: Double?, now: Double) -> [Action] {
        guard let job = originalJobs[itemID], job.stage == .fetching else { return [] }
        pipeline.fetchEnded()
        switch result {
        case .failure(.noSource), .failure(.busy): break
        default:
            counters.originFetches += 1
            if case .failure = result { counters.originErrors += 1 } else if let seconds { originLatency.record(seconds) }
        }
        switch result {
        case .success(let original):
            pipeline.weigh(original.count)
            let owning = job.claimHeld ? claimTier : nil
            return [.keepOriginal(itemID: itemID, bytes: original, owningIn: owning)] + originalFound(itemID: itemID, original)
        case .failure(let failure):
            originalJobs[itemID] = nil
            var actions: [Action] = []
            if job.claimHeld, let claimTier {
                if failure == .busy || failure == .noSource {
                    actions.append(.releaseOriginalClaim(itemID: itemID, tier: claimTier))
                } else {
                    let seconds = job.waiting.first.map(failed.nextTTL) ?? failed.first
                    actions.append(.originalFailed(itemID: itemID, seconds: seconds, tier: claimTier))
                }
            }
            for key in job.waiting { actions += fail(key, failure, now: now) }
            return actions + startDeferredFetches()
        }
    }

    /// The node that owns `key`'s original answered for it (see `Action.askOwner`).
    public mutating func ownerAnswered(_ key: ThumbnailKey, owner: String, _ answer: OwnerAnswer, now: Double) -> [Action] {
        guard let job = jobs[key], case .askingOwner = job.stage else { return [] }
        switch answer {
        case .made(let made):
            // The owner wrote the tiers the cluster shares; this node's own tiers below get it.
            let below = claimTier.map { Array(($0 + 1)..<lookupTiers) } ?? Array(0..<lookupTiers)
            return keep(key, made, storeInto: below)
        case .failed(let remaining):
            counters.sharedFailures += 1
            return fail(key, .origin, now: now, remembered: remaining)
        case .busy:
            return fail(key, .busy, now: now)
        case .unreachable:
            // Gone or not answering: forgotten, and the original looked for again (this node may fetch it now).
            counters.ownerUnreachable += 1
            guard let item = job.item else { return fail(key, .busy, now: now) }
            jobs[key]?.stage = .awaitingOriginal
            var actions: [Action] = claimTier.map { [.forgetOwner(itemID: key.itemID, url: owner, tier: $0)] } ?? []
            if originalJobs[key.itemID] != nil {
                originalJobs[key.itemID]?.waiting.append(key)
                originalJobs[key.itemID]?.unreachableOwner = owner
                return actions
            }
            actions += lookForOriginal(of: key.itemID, item: item, for: [key], unreachableOwner: owner)
            return actions
        }
    }

    // MARK: Steps

    /// Starts the search for item `itemID`'s original for the `waiting` variants.
    mutating func lookForOriginal(of itemID: Int64, item: Item, for waiting: [ThumbnailKey], unreachableOwner: String? = nil) -> [Action] {
        originalJobs[itemID] = OriginalJob(item: item, waiting: waiting, stage: .reading, unreachableOwner: unreachableOwner)
        if keepsOriginals { return [.readOriginal(itemID: itemID)] }
        return originalRead(itemID: itemID, nil, now: 0)
    }

    /// The original is here (from disk or the origin): kept in memory a while,
    /// so a later variant needs no read, and handed to libvips for every variant waiting.
    private mutating func originalFound(itemID: Int64, _ original: [UInt8]) -> [Action] {
        guard let job = originalJobs.removeValue(forKey: itemID) else { return [] }
        originals.insert(original, for: itemID, cost: original.count)
        var actions: [Action] = []
        for key in job.waiting where jobs[key] != nil {
            actions.append(startResize(key, original: original))
        }
        return actions + startDeferredFetches()
    }

    /// Goes for the original now — in a cluster, by its claim first — or holds
    /// it back while the originals waiting for libvips fill their budget. The
    /// claim is asked for only once the fetch could start: a node never holds
    /// the cluster's claim on an original it has queued behind its own work,
    /// while another node, with room, waits on it.
    private mutating func startFetch(_ itemID: Int64) -> [Action] {
        guard originalJobs[itemID] != nil else { return [] }
        if pipeline.isFull {
            originalJobs[itemID]?.stage = .deferred
            pipeline.holdBack(itemID, urgent: isUrgent(itemID: itemID))
            return []
        }
        // Its place in the pipeline is taken now, for the claim's answer and the fetch.
        pipeline.fetchStarted()
        if let claimTier {
            originalJobs[itemID]?.stage = .claiming
            return [.claimOriginal(itemID: itemID, tier: claimTier)]
        }
        return fetch(itemID)
    }

    /// Fetches the original from the origin, in the pipeline place `startFetch` took.
    private mutating func fetch(_ itemID: Int64) -> [Action] {
        guard let job = originalJobs[itemID] else { return [] }
        originalJobs[itemID]?.stage = .fetching
        return [.fetchOriginal(itemID: itemID, item: job.item, urgent: isUrgent(itemID: itemID))]
    }

    /// Starts held-back fetches, a reader's first, while the originals waiting
    /// for libvips are under their bound (or none wait at all).
    mutating func startDeferredFetches() -> [Action] {
        var actions: [Action] = []
        // A fetch pre-warm deferred may since have been joined by a reader: it goes first too.
        while let place = pipeline.nextHeldBack(isUrgent: { isUrgent(itemID: $0) }) {
            let itemID = pipeline.take(place)
            guard let job = originalJobs[itemID], job.stage == .deferred else { continue }
            guard job.waiting.contains(where: { jobs[$0] != nil }) else {
                // Nobody waits any more.
                originalJobs[itemID] = nil
                continue
            }
            actions += startFetch(itemID)
        }
        return actions
    }

    /// A reader now waits on item `itemID`'s original: a held-back fetch joins
    /// the readers' line, and one waiting for a connection goes first.
    mutating func promoteOriginal(of itemID: Int64) -> [Action] {
        guard let job = originalJobs[itemID] else { return [] }
        switch job.stage {
        case .deferred:
            pipeline.raise(itemID)
            return []
        case .fetching:
            return [.promoteFetch(itemID: itemID, item: job.item)]
        case .reading, .claiming:
            return []
        }
    }

    /// Whether a reader waits on the original of item `itemID` now.
    public func fetchIsUrgent(itemID: Int64) -> Bool { isUrgent(itemID: itemID) }

    private func isUrgent(itemID: Int64) -> Bool {
        originalJobs[itemID]?.waiting.contains { jobs[$0]?.urgent == true } ?? false
    }
}
