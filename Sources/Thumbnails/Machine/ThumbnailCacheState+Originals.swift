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

    /// The original of `picture` was read from disk (see `Action.readOriginal`): its bytes, or nil.
    public mutating func originalRead(picture: Picture, _ bytes: [UInt8]?, now: Double) -> [Action] {
        guard let job = originalJobs[picture], job.stage == .reading else { return [] }
        if let bytes {
            counters.originalsFromDisk += 1
            return originalFound(picture: picture, bytes)
        }
        return startFetch(picture)
    }

    /// The cluster's claim on fetching `picture`'s original came to `claim` (see `Action.claimOriginal`).
    public mutating func originalClaimAnswered(picture: Picture, _ claim: OriginalClaim, now: Double) -> [Action] {
        guard let job = originalJobs[picture], job.stage == .claiming else { return [] }
        switch claim {
        case .won:
            counters.claimsWon += 1
            originalJobs[picture]?.claimHeld = true
            return fetch(picture)
        case .unavailable:
            counters.claimsUnavailable += 1
            return fetch(picture)
        case .owner(let url) where url == job.unreachableOwner:
            // Still named after it did not answer (another node wrote it back): fetch it here.
            return fetch(picture)
        case .owner(let url):
            // The node that fetched it makes each variant from it: one fetch for the cluster.
            counters.claimsWaited += 1
            originalJobs[picture] = nil
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
            originalJobs[picture] = nil
            pipeline.fetchEnded()
            return job.waiting.flatMap { fail($0, .origin, now: now, remembered: remaining) } + startDeferredFetches()
        }
    }

    /// The original of `picture` arrived from the origin (or failed); `seconds` is what the fetch took.
    public mutating func originalArrived(picture: Picture, _ result: Result<[UInt8], Failure>, seconds: Double?, now: Double) -> [Action] {
        guard let job = originalJobs[picture], job.stage == .fetching else { return [] }
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
            if keepsOriginals || owning != nil { keeping[picture] = original }
            return [.keepOriginal(picture: picture, bytes: original, owningIn: owning)] + originalFound(picture: picture, original)
        case .failure(let failure):
            originalJobs[picture] = nil
            var actions: [Action] = []
            if job.claimHeld, let claimTier {
                if failure == .busy || failure == .noSource {
                    actions.append(.releaseOriginalClaim(picture: picture, tier: claimTier))
                } else {
                    let seconds = job.waiting.first.map(failed.nextTTL) ?? failed.first
                    actions.append(.originalFailed(picture: picture, seconds: seconds, tier: claimTier))
                }
            }
            for key in job.waiting { actions += fail(key, failure, now: now) }
            return actions + startDeferredFetches()
        }
    }

    /// `keepOriginal` of `picture` has ended: its original is on disk (and
    /// owned in the shared tier) for the variants asked for after now.
    public mutating func originalKept(picture: Picture) -> [Action] {
        keeping[picture] = nil
        return []
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
            var actions: [Action] = claimTier.map { [.forgetOwner(picture: key.picture, url: owner, tier: $0)] } ?? []
            if originalJobs[key.picture] != nil {
                originalJobs[key.picture]?.waiting.append(key)
                originalJobs[key.picture]?.unreachableOwner = owner
                return actions
            }
            actions += lookForOriginal(of: key.picture, item: item, for: [key], unreachableOwner: owner)
            return actions
        }
    }

    // MARK: Steps

    /// Starts the search for `picture`'s original for the `waiting` variants.
    mutating func lookForOriginal(of picture: Picture, item: Item, for waiting: [ThumbnailKey], unreachableOwner: String? = nil) -> [Action] {
        originalJobs[picture] = OriginalJob(item: item, waiting: waiting, stage: .reading, unreachableOwner: unreachableOwner)
        if keepsOriginals { return [.readOriginal(picture: picture)] }
        return originalRead(picture: picture, nil, now: 0)
    }

    /// The original is here (from disk or the origin): kept in memory a while,
    /// so a later variant needs no read, and handed to libvips for every variant waiting.
    private mutating func originalFound(picture: Picture, _ original: [UInt8]) -> [Action] {
        guard let job = originalJobs.removeValue(forKey: picture) else { return [] }
        originals.insert(original, for: picture, cost: original.count)
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
    private mutating func startFetch(_ picture: Picture) -> [Action] {
        guard originalJobs[picture] != nil else { return [] }
        if pipeline.isFull {
            originalJobs[picture]?.stage = .deferred
            pipeline.holdBack(picture, urgent: isUrgent(picture: picture))
            return []
        }
        // Its place in the pipeline is taken now, for the claim's answer and the fetch.
        pipeline.fetchStarted()
        if let claimTier {
            originalJobs[picture]?.stage = .claiming
            return [.claimOriginal(picture: picture, tier: claimTier)]
        }
        return fetch(picture)
    }

    /// Fetches the original from the origin, in the pipeline place `startFetch` took.
    private mutating func fetch(_ picture: Picture) -> [Action] {
        guard let job = originalJobs[picture] else { return [] }
        originalJobs[picture]?.stage = .fetching
        return [.fetchOriginal(picture: picture, item: job.item, urgent: isUrgent(picture: picture))]
    }

    /// Starts held-back fetches, a reader's first, while the originals waiting
    /// for libvips are under their bound (or none wait at all).
    mutating func startDeferredFetches() -> [Action] {
        var actions: [Action] = []
        // A fetch pre-warm deferred may since have been joined by a reader: it goes first too.
        while let place = pipeline.nextHeldBack(isUrgent: { isUrgent(picture: $0) }) {
            let picture = pipeline.take(place)
            guard let job = originalJobs[picture], job.stage == .deferred else { continue }
            guard job.waiting.contains(where: { jobs[$0] != nil }) else {
                // Nobody waits any more.
                originalJobs[picture] = nil
                continue
            }
            actions += startFetch(picture)
        }
        return actions
    }

    /// A reader now waits on `picture`'s original: a held-back fetch joins
    /// the readers' line, and one waiting for a connection goes first.
    mutating func promoteOriginal(of picture: Picture) -> [Action] {
        guard let job = originalJobs[picture] else { return [] }
        switch job.stage {
        case .deferred:
            pipeline.raise(picture)
            return []
        case .fetching:
            return [.promoteFetch(picture: picture, item: job.item)]
        case .reading, .claiming:
            return []
        }
    }

    /// Whether a reader waits on the original of `picture` now.
    public func fetchIsUrgent(picture: Picture) -> Bool { isUrgent(picture: picture) }

    private func isUrgent(picture: Picture) -> Bool {
        originalJobs[picture]?.waiting.contains { jobs[$0]?.urgent == true } ?? false
    }
}
