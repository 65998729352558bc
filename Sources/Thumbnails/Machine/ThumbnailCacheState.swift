import DequeModule
import WarmfeedCore

/// The thumbnail cache's budgets where the operator says nothing: one number
/// each, for the machine, the service and the server's configuration.
public enum ThumbnailBudgets {
    /// Memory for originals, in bytes (`--originals-mb`): half kept after a
    /// resize for the item's other variants, half for originals waiting for
    /// libvips (`ThumbnailCacheState.init`).
    public static let originals = 32 << 20
}

/// Every decision of the thumbnail cache, as one pure state machine over its tiers.
///
/// A thumbnail is looked for in memory (kept here), then in each lookup tier
/// in turn (the disk; in a cluster, the shared tier in front of it), then made
/// from its item's original: one kept in memory, else one kept on disk (the
/// `OriginalStore`), else, in a cluster, one another node owns (it makes the
/// variant for us), else fetched from the origin (once for all its variants in
/// flight) and resized. Each event — a request, a tier's answer, an original
/// read or arrived, a claim's answer, an owner's answer, a resize's end, a
/// waiter's cancellation — returns the actions to run: look in a tier, read,
/// claim or fetch an original, ask its owner, resize, store into tiers,
/// answer waiters, release evicted values.
///
/// It does no I/O, takes no locks and reads no clock: the caller passes `now`
/// (seconds on a monotonic clock), holds it behind one lock, and runs the
/// actions outside it, in the manner of async-http-client's connection pool
/// and of `FetchQueue`.
///
/// `Value` is what memory keeps and waiters get (a prepared response);
/// `Waiter` is whatever answers a request (a continuation); `Item` is what the
/// caller needs to fetch an original (the feed item), carried with the job.
///
/// Memory is the one part that is not a value: a `StripedCache`, which the
/// server threads read without this machine's lock (`memory`), so a hit, the
/// common case, takes no lock every thread takes. The machine still decides
/// what goes in (only a job's end puts anything there) and looks there first.
public struct ThumbnailCacheState<Value: Sendable, Waiter, Item> {
    enum Stage {
        case lookingUp(tier: Int)
        /// Every tier missed and the job came without its item: the caller reads it.
        case readingItem
        /// Waiting for its item's original (see `OriginalJob`).
        case awaitingOriginal
        /// Another node owns the original and makes this variant (`askOwner`).
        case askingOwner
        case resizing
    }

    struct Job {
        /// Nil until it is needed: a reader's request comes without it, and a
        /// thumbnail found in a tier never needs it.
        var item: Item?
        var waiters: [(id: UInt64, waiter: Waiter)]
        var stage: Stage
        var urgent: Bool
    }

    /// Where the original of an item is being looked for: on disk, through the
    /// cluster's claim, or from the origin (held back while the originals
    /// waiting for libvips fill their budget).
    enum OriginalStage {
        case reading, claiming, deferred, fetching
    }

    /// The search for one item's original, for the variants waiting on it.
    struct OriginalJob {
        var item: Item
        var waiting: [ThumbnailKey]
        var stage: OriginalStage
        /// Whether this node holds the cluster's claim on fetching it.
        var claimHeld = false
        /// An owner that did not answer: this search does not ask it again.
        var unreachableOwner: String?
    }

    /// Scan-resistant: thumbnails pre-warm makes for a fling no one stops at
    /// wait on probation, and cannot flush the ones readers come back to. Read
    /// by the server threads without the lock; written only by this machine.
    public let memory: StripedCache<ThumbnailKey, Value>
    var jobs: [ThumbnailKey: Job] = [:]
    /// Items whose original is being looked for, with the variants waiting for it.
    var originalJobs: [Picture: OriginalJob] = [:]
    /// Originals fetched lately, so an item's 1x and 2x come from one fetch.
    var originals: LRUCache<Picture, [UInt8]>
    /// Originals just fetched whose `keepOriginal` has not ended: until its
    /// disk write (and in a cluster its owner record) is done, a later variant
    /// takes the bytes from here. Else one asked for after the small memory
    /// half let the original go read the disk before the write, missed, and
    /// fetched it again; in a cluster it first found its own owner record,
    /// took it for a lost original and claimed a second fetch.
    var keeping: [Picture: [UInt8]] = [:]
    /// Originals handed to libvips, fetches on their way, and fetches held
    /// back while they fill their half of the budget (see `OriginalsPipeline`).
    var pipeline: OriginalsPipeline
    /// The most bytes of originals waiting for libvips before new fetches wait.
    public var resizingBudget: Int { pipeline.budget }
    /// Failures remembered (see `NegativeCache`).
    var failed: NegativeCache

    /// How many lookup tiers sit between memory and the origin.
    public let lookupTiers: Int
    /// The shared tier that hands out claims on fetching an original and names
    /// its owner, when a cluster has one.
    public let claimTier: Int?
    /// Whether originals are kept on disk (an `OriginalStore`), to be read before the origin is asked.
    public let keepsOriginals: Bool
    /// How long a first failure is remembered, in seconds; each failure in a row doubles it.
    public var firstNegativeTTL: Double { failed.first }
    /// The counters so far.
    public internal(set) var counters: Counters
    /// Recent origin fetch and resize latencies, in seconds.
    public internal(set) var originLatency = LatencyWindow()
    public private(set) var thumbnailLatency = LatencyWindow()

    /// An empty cache: `memoryBudget` bytes of thumbnails, `originalsBudget`
    /// bytes of originals, `lookupTiers` tiers below memory, failures kept
    /// `negativeTTL` seconds.
    ///
    /// The originals' budget is shared: half for originals kept for a later
    /// variant, half for originals fetched and waiting for libvips. An origin
    /// faster than the resize workers would otherwise fill memory with
    /// originals nobody counts (513 of them, ~50 MB, in `bench/mixed.sh`): once
    /// the waiting half is full, new fetches wait (a reader's first) until a
    /// resize ends. One fetch always goes ahead when nothing waits, so a
    /// budget smaller than one original slows the cache, never stops it.
    ///
    /// When originals are kept on disk (`keepsOriginals`), memory keeps only
    /// an eighth of the budget of them (the last few, for an item's sizes made
    /// one after the other): a later size reads its original back from disk.
    public init(
        memoryBudget: Int, originalsBudget: Int = ThumbnailBudgets.originals, lookupTiers: Int = 1, claimTier: Int? = nil, keepsOriginals: Bool = false,
        negativeTTL: Double = 30, firstNegativeTTL: Double = 5, negativeCapacity: Int = 10_000
    ) {
        self.keepsOriginals = keepsOriginals
        failed = NegativeCache(first: firstNegativeTTL, longest: negativeTTL, capacity: negativeCapacity)
        memory = StripedCache(capacity: memoryBudget)
        originals = LRUCache(capacity: keepsOriginals ? originalsBudget / 8 : originalsBudget - originalsBudget / 2)
        pipeline = OriginalsPipeline(budget: originalsBudget / 2)
        self.lookupTiers = max(0, lookupTiers)
        self.claimTier = claimTier.flatMap { (0..<max(0, lookupTiers)).contains($0) ? $0 : nil }
        counters = Counters(tierHits: Array(repeating: 0, count: max(0, lookupTiers)))
    }

    // MARK: Events

    /// A request for `key` (of `item`) at `now`. The `waiter`, when given, is
    /// answered through an `.answer` action, now or when the job ends; `id`
    /// names it for `cancel`. Without `item`, the job asks for it
    /// (`.readItem`) only once every tier has missed.
    public mutating func request(
        _ key: ThumbnailKey, of item: Item?, waiter: (id: UInt64, waiter: Waiter)?, from asker: Asker, now: Double
    ) -> (decision: Decision, actions: [Action]) {
        let reader = asker != .prewarm
        if let value = memory.value(for: key) {
            if reader { counters.hits += 1 }
            return (.hit, waiter.map { [.answer([$0.waiter], .image(value))] } ?? [])
        }
        if failed.isFailing(key, now: now) {
            if reader { counters.negativeHits += 1 }
            return (.failedRecently, waiter.map { [.answer([$0.waiter], .placeholder)] } ?? [])
        }
        // Another variant of the item failed for want of its original: so would this one,
        // and the origin is not asked again (a WebP failed, then pre-warm's AVIF came).
        if jobs[key] == nil, failed.siblingRemaining(of: key, now: now) != nil {
            if reader { counters.negativeHits += 1 }
            return (.failedRecently, waiter.map { [.answer([$0.waiter], .placeholder)] } ?? [])
        }
        if let job = jobs[key] {
            guard reader else {
                // Pre-warm waits only on what it starts: the job is someone else's.
                return (.joined, waiter.map { [.answer([$0.waiter], .released)] } ?? [])
            }
            counters.coalesced += 1
            if let waiter { jobs[key]?.waiters.append(waiter) }
            // A reader now waits on it: what is still to do goes ahead of pre-warm's,
            // and so does its original's fetch if it waits for a connection.
            guard asker == .reader, !job.urgent else { return (.joined, []) }
            jobs[key]?.urgent = true
            switch job.stage {
            case .awaitingOriginal: return (.joined, promoteOriginal(of: key.picture))
            case .resizing: return (.joined, [.promoteResize(key)])
            case .lookingUp, .readingItem, .askingOwner: return (.joined, [])
            }
        }
        if reader { counters.misses += 1 } else { counters.prewarmStarts += 1 }
        jobs[key] = Job(item: item, waiters: waiter.map { [$0] } ?? [], stage: .lookingUp(tier: 0), urgent: asker == .reader)
        return (.started, nextStep(for: key))
    }

    /// Lookup tier `tier` answered for `key`: `found` when it had it.
    public mutating func tierAnswered(_ key: ThumbnailKey, tier: Int, found: Made?) -> [Action] {
        tierAnswered(key, tier: tier, found.map { .hit($0) } ?? .miss)
    }

    /// Lookup tier `tier` answered for `key`.
    public mutating func tierAnswered(_ key: ThumbnailKey, tier: Int, _ lookup: Lookup, now: Double = 0) -> [Action] {
        guard let job = jobs[key], case .lookingUp(let current) = job.stage, current == tier else { return [] }
        switch lookup {
        case .hit(let found):
            counters.tierHits[tier] += 1
            // Tiers above the one that answered (faster, or shared) get it too.
            return keep(key, found, storeInto: Array(0..<tier))
        case .failed(let remaining):
            counters.sharedFailures += 1
            return fail(key, .origin, now: now, remembered: remaining)
        case .miss:
            jobs[key]?.stage = .lookingUp(tier: tier + 1)
            return nextStep(for: key)
        }
    }

    /// The resize of `key` ended: the thumbnail, or why not; `seconds` is what it took.
    public mutating func resized(_ key: ThumbnailKey, _ result: Result<Made, Failure>, seconds: Double?, now: Double) -> [Action] {
        guard let job = jobs[key], case .resizing = job.stage else { return [] }
        releaseOriginal(of: key)
        switch result {
        case .success(let made):
            counters.resizes += 1
            if let seconds { thumbnailLatency.record(seconds) }
            return keep(key, made, storeInto: Array(0..<lookupTiers)) + startDeferredFetches()
        case .failure(let failure):
            return fail(key, failure, now: now) + startDeferredFetches()
        }
    }

    /// The waiter `id`, which asked for `key`, went away (its request was
    /// cancelled): it is answered `.released` now; the job goes on for
    /// whoever else wants it. Only `key`'s job is looked at: a search of every
    /// job, under the lock every ask takes, made a crowd whose waits were shed
    /// quadratic (2,000 cancels over 4,600 jobs held the lock for seconds,
    /// and the server threads asking behind it kept a probe waiting past 1 s:
    /// `bench/crowd.py`).
    public mutating func cancel(waiter id: UInt64, of key: ThumbnailKey) -> [Action] {
        guard let index = jobs[key]?.waiters.firstIndex(where: { $0.id == id }), let gone = jobs[key]?.waiters.remove(at: index) else { return [] }
        counters.cancelledWaiters += 1
        return [.answer([gone.waiter], .released)]
    }

    // MARK: Steps

    /// What a job in its current stage needs next.
    mutating func nextStep(for key: ThumbnailKey) -> [Action] {
        guard let job = jobs[key], case .lookingUp(let tier) = job.stage else { return [] }
        if tier < lookupTiers { return [.lookUp(key, tier: tier)] }
        guard let item = job.item else {
            jobs[key]?.stage = .readingItem
            return [.readItem(key)]
        }
        // Every tier missed: the thumbnail is made from its item's original.
        if let original = originals.value(for: key.picture) ?? keeping[key.picture] {
            counters.originalReuses += 1
            return [startResize(key, original: original)]
        }
        jobs[key]?.stage = .awaitingOriginal
        if originalJobs[key.picture] != nil {
            originalJobs[key.picture]?.waiting.append(key)
            return []
        }
        return lookForOriginal(of: key.picture, item: item, for: [key])
    }

    /// Hands `original` to libvips for `key`, holding its bytes until the resize ends.
    mutating func startResize(_ key: ThumbnailKey, original: [UInt8]) -> Action {
        jobs[key]?.stage = .resizing
        pipeline.hold(key.picture, bytes: original.count)
        return .resize(key, original: original, urgent: jobs[key]?.urgent ?? false)
    }

    /// A resize of `key` ended: its original is let go once no other resize holds it.
    private mutating func releaseOriginal(of key: ThumbnailKey) {
        pipeline.release(key.picture)
    }

    /// Ends `key`'s job with `made`: kept in memory, written into `tiers`, waiters answered.
    mutating func keep(_ key: ThumbnailKey, _ made: Made, storeInto tiers: [Int]) -> [Action] {
        let job = jobs.removeValue(forKey: key)
        failed.forget(key)
        // One too large for its stripe is served, not kept: it would flush the stripe's others.
        let evicted = made.cost <= memory.stripeCapacity ? memory.insert(made.value, for: key, cost: made.cost) : []
        counters.evictions += evicted.count
        var actions: [Action] = []
        if !tiers.isEmpty { actions.append(.store(key, bytes: made.bytes, tiers: tiers)) }
        if let waiters = job?.waiters, !waiters.isEmpty { actions.append(.answer(waiters.map(\.waiter), .image(made.value))) }
        if !evicted.isEmpty { actions.append(.release(evicted)) }
        return actions
    }

    /// Ends `key`'s job in failure: waiters get the placeholder; a real failure
    /// is remembered, longer with each one in a row, and shared with the
    /// cluster; one the cluster already `remembered` is kept as long as it says.
    mutating func fail(_ key: ThumbnailKey, _ failure: Failure, now: Double, remembered: Double? = nil) -> [Action] {
        guard let job = jobs.removeValue(forKey: key) else { return [] }
        if case .resizing = job.stage { releaseOriginal(of: key) }
        var actions: [Action] = []
        if failure == .busy {
            counters.busy += 1
        } else if let remembered {
            failed.remember(key, for: remembered, now: now)
        } else {
            counters.failures += 1
            let ttl = failed.failed(key, now: now)
            if let claimTier, failure != .noSource {
                actions.append(.storeFailure(key, seconds: ttl, tier: claimTier))
            }
        }
        if !job.waiters.isEmpty { actions.append(.answer(job.waiters.map(\.waiter), .placeholder)) }
        return actions
    }

}

extension ThumbnailCacheState: Sendable where Value: Sendable, Waiter: Sendable, Item: Sendable {}

extension ThumbnailCacheState.Job: Sendable where Value: Sendable, Waiter: Sendable, Item: Sendable {}

extension ThumbnailCacheState.OriginalJob: Sendable where Value: Sendable, Waiter: Sendable, Item: Sendable {}
