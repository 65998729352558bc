import CoreMetrics
import HTTPServer
import ImageFormats
import Logging
import OriginFetcher
import Synchronization
import Thumbnailer
import WarmfeedCore

/// Makes and keeps thumbnails: memory, then the lookup tiers (the disk, and a
/// cluster's shared tier), then the item's original: kept on disk, owned by
/// another node of the cluster (which makes the variant), or fetched.
///
/// Every decision is `ThumbnailCacheState`'s; this service holds it behind one
/// lock and runs the actions it returns outside the lock: reading and writing
/// the tiers and the originals on disk, claims, asking an original's owner,
/// fetching originals with libcurl, resizing with libvips, answering waiters.
/// Each action's result goes back into the state machine as an event.
package final class ThumbnailService: StatsPublisher, Sendable {
    /// What a request gets.
    enum Outcome: Sendable {
        /// The thumbnail, as the whole response, built once.
        case image(PreparedResponse)
        /// The origin failed (now or recently), the item has no picture, or
        /// the store does not answer: serve the placeholder.
        case placeholder
        /// No item has that id.
        case noSuchItem
    }

    typealias Waiter = CheckedContinuation<ThumbnailAnswer<PreparedResponse>, Never>
    typealias State = ThumbnailCacheState<PreparedResponse, Waiter, FeedItem>

    /// The box thumbnails fit in at 1×; 2× doubles it.
    static let box = (width: 160, height: 120)

    /// Everything that decides, under the one lock: the state machine, and
    /// the tasks of pre-warm's work under way, which a reader who joins raises.
    struct Locked {
        var machine: State
        /// Pre-warm's resizes under way, by thumbnail.
        var prewarmResizes: [ThumbnailKey: Task<Void, Never>] = [:]
        /// Pre-warm's fetches under way, by item.
        var prewarmFetches: [Int64: Task<Void, Never>] = [:]
    }

    private let locked: Mutex<Locked>
    /// How long a first failure is remembered, in seconds (fixed at the start).
    let firstFailureSeconds: Double
    private let waiterIDs = Atomic<UInt64>(0)
    /// The lookup tiers, in the order the state machine numbers them.
    let tiers: [any ThumbnailTier]
    let fetcher: OriginFetcher
    let thumbnailer: Thumbnailer
    let origin: ImageSource
    let limits: FetchLimits
    let clock: Uptime
    let metrics: ThumbnailMetrics
    /// Where each picture's preview is kept, when anywhere.
    let previews: PreviewKeeper?
    /// Where a reader's job reads its item, once no tier has the thumbnail.
    let store: any FeedStore
    /// Originals kept on disk after their fetch, when any are.
    let originalStore: OriginalStore?
    /// Where origin failures are told.
    let logger: Logger

    package init(
        store: any FeedStore, memoryBudget: Int, originalsBudget: Int = 32 << 20, negativeTTL: (first: Double, longest: Double), tiers: [any ThumbnailTier],
        fetcher: OriginFetcher,
        thumbnailer: Thumbnailer, origin: ImageSource, limits: FetchLimits, clock: Uptime, metrics: any MetricsFactory,
        previews: PreviewKeeper? = nil, originalStore: OriginalStore? = nil, logger: Logger = Logger(label: "warmfeed.thumbnails")
    ) {
        self.logger = logger
        self.previews = previews
        self.store = store
        self.originalStore = originalStore
        let machine = State(
            memoryBudget: memoryBudget, originalsBudget: originalsBudget, lookupTiers: tiers.count,
            claimTier: tiers.firstIndex { $0 is any SharedThumbnailTier }, keepsOriginals: originalStore != nil,
            negativeTTL: negativeTTL.longest, firstNegativeTTL: negativeTTL.first
        )
        firstFailureSeconds = machine.firstNegativeTTL
        locked = Mutex(Locked(machine: machine))
        self.tiers = tiers
        self.fetcher = fetcher
        self.thumbnailer = thumbnailer
        self.origin = origin
        self.limits = limits
        self.clock = clock
        self.metrics = ThumbnailMetrics(factory: metrics)
    }

    /// The thumbnail if it is in memory now (counted as a hit), without waiting.
    func cached(_ key: ThumbnailKey) -> PreparedResponse? {
        let now = clock.now
        let value = locked.withLock { $0.machine.cachedForReader(key, now: now) }
        if value != nil { metrics.decided(.hit) }
        return value
    }

    /// The scales pre-warm makes now: 1x always, 2x while readers on dense screens are about.
    package var scalesInDemand: [Int] {
        let now = clock.now
        return locked.withLock { $0.machine.scalesInDemand(now: now) }
    }

    /// A reader's request: from memory, by joining the job in flight, from a
    /// tier, or by making it now. The item is read from the store only when
    /// it must be made: a thumbnail another node or the disk has costs no
    /// store read. When the request is cancelled its waiter is let go; the job goes on.
    func thumbnail(_ key: ThumbnailKey) async -> Outcome {
        switch await ask(key, of: nil, from: .reader) {
        case .image(let prepared): .image(prepared)
        case .placeholder, .released: .placeholder
        case .noSuchItem: .noSuchItem
        }
    }

    /// Pre-warm: makes the thumbnail if nothing has it or is making it, and
    /// waits for the job it started; returns at once otherwise.
    package func warm(_ key: ThumbnailKey, of item: FeedItem) async {
        _ = await ask(key, of: item, from: .prewarm)
    }

    private func ask(_ key: ThumbnailKey, of item: FeedItem?, from asker: State.Asker) async -> State.Answer {
        let id = waiterIDs.add(1, ordering: .relaxed).newValue
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: Waiter) in
                let now = clock.now
                apply { locked in
                    let (decision, actions) = locked.machine.request(key, of: item, waiter: (id, waiter), from: asker, now: now)
                    if asker == .reader { metrics.decided(decision) }
                    return actions
                }
                // Cancelled before the waiter was registered: the handler below has run already and found nothing.
                if Task.isCancelled { apply { $0.machine.cancel(waiter: id) } }
            }
        } onCancel: {
            apply { $0.machine.cancel(waiter: id) }
        }
    }

    /// The thumbnails' sections of the operator's views (`StatsPublisher`):
    /// the tiers, the counts of readers' requests, the origin and libvips, and
    /// a cluster's shared tier (what Redis holds, with the claims this cache
    /// counted). The machine's numbers are read in one go, under its lock.
    package func publish(into stats: inout CacheStats) {
        let (counters, usage, originLatency, thumbnailLatency) = locked.withLock {
            ($0.machine.counters, $0.machine.usage, $0.machine.originLatency, $0.machine.thumbnailLatency)
        }
        let disk = tiers.lazy.compactMap { $0 as? ThumbnailDiskTier }.first?.usage ?? ThumbnailDiskTier.Usage()
        let originalsOnDisk = originalStore?.usage ?? ThumbnailDiskTier.Usage()
        func tier(_ usage: ThumbnailDiskTier.Usage) -> CacheStats.Tier {
            var tier = CacheStats.Tier()
            (tier.entries, tier.bytes, tier.budgetBytes) = (usage.entries, usage.bytes, usage.budget)
            return tier
        }
        func hits(in name: String) -> Int {
            tiers.firstIndex { $0.name == name }.map { counters.tierHits[$0] } ?? 0
        }
        // Hits over all requests that reached a decision (hits, misses, joins, negative hits).
        let decided = counters.hits + counters.misses + counters.coalesced + counters.negativeHits
        (stats.memory.entries, stats.memory.bytes, stats.memory.budgetBytes) = (usage.entries, usage.bytes, usage.budget)
        stats.disk = tier(disk)
        stats.originals.disk = tier(originalsOnDisk)
        (stats.originals.fromDisk, stats.originals.fromMemory) = (counters.originalsFromDisk, counters.originalReuses)
        stats.diskCorruptFilesReplaced = disk.corrupt
        stats.diskMaxEntries = disk.maxEntries
        (stats.hits, stats.misses, stats.coalesced) = (counters.hits, counters.misses, counters.coalesced)
        stats.hitRatio = decided == 0 ? nil : Double(counters.hits) / Double(decided)
        (stats.evictions, stats.diskHits, stats.sharedHits) = (counters.evictions, hits(in: "disk"), hits(in: "shared"))
        (stats.negativeEntries, stats.negativeHits, stats.failures) = (usage.negative, counters.negativeHits, counters.failures)
        stats.inFlight = usage.inFlight
        stats.resizes = counters.resizes
        let fetched = fetcher.stats
        (stats.origin.fetches, stats.origin.errors, stats.origin.inFlight) = (counters.originFetches, counters.originErrors, fetched.inFlight)
        (stats.origin.busy, stats.origin.cancelled, stats.origin.retried) = (fetched.busy, fetched.cancelled, fetched.retriedOnNewConnection)
        stats.origin.latency = CacheStats.Latency(originLatency)
        stats.thumbnailLatency = CacheStats.Latency(thumbnailLatency)
        stats.memoryUse.thumbnailsBytes = usage.bytes
        stats.memoryUse.originalsBytes = usage.originalBytes
        stats.memoryUse.diskIndexBytes = disk.indexBytes
        stats.memoryUse.diskIndexBudgetBytes = disk.indexBudget
        stats.memoryUse.originalsIndexBytes = originalsOnDisk.indexBytes
        if var shared = tiers.lazy.compactMap({ $0 as? SharedTier }).first?.snapshot {
            (shared.claimsWon, shared.claimsWaited, shared.claimsUnavailable) = (counters.claimsWon, counters.claimsWaited, counters.claimsUnavailable)
            (shared.ownerAsks, shared.ownerUnreachable) = (counters.ownerAsks, counters.ownerUnreachable)
            stats.shared = shared
        }
    }

    /// Whether a reader waits on item `itemID`'s original now (one may have
    /// joined since its fetch was decided), asked of the machine under its lock.
    func fetchIsUrgent(itemID: Int64) -> Bool {
        locked.withLock { $0.machine.fetchIsUrgent(itemID: itemID) }
    }

    // MARK: Running the state machine's actions

    /// Feeds one event to the state machine under the lock and runs there the
    /// actions that touch the task tables; runs the rest outside it.
    func apply(_ event: (inout Locked) -> [State.Action]) {
        let (actions, failed) = locked.withLock { locked in
            let before = locked.machine.counters.failures
            let actions = event(&locked).filter { runLocked($0, in: &locked) }
            return (actions, locked.machine.counters.failures - before)
        }
        if failed > 0 { metrics.failed(failed) }
        run(actions)
    }

    /// Runs the part of `action` that needs the lock: pre-warm's work is
    /// started as a task kept in its table (made under the lock its end takes
    /// to remove it, so it is never kept after it ended), and a reader who
    /// joins raises that task by awaiting it from a high-priority one (the
    /// thumbnailer and the fetch queue move escalated work up). Nothing here
    /// waits. Returns whether something is left to run outside the lock.
    private func runLocked(_ action: State.Action, in locked: inout Locked) -> Bool {
        switch action {
        case .fetchOriginal(let itemID, let item, urgent: false):
            locked.prewarmFetches[itemID] = Task(priority: .low) { await fetchOriginal(itemID, of: item, urgent: false) }
            return false
        case .resize(let key, let original, urgent: false):
            locked.prewarmResizes[key] = Task(priority: .low) { await resize(key, original: original) }
            return false
        case .promoteFetch(let itemID, _):
            // A low-priority task on a busy machine may not even have asked for its fetch yet;
            // one already waiting for a connection is moved up outside the lock.
            if let task = locked.prewarmFetches[itemID] { Task(priority: .high) { await task.value } }
            return true
        case .promoteResize(let key):
            if let task = locked.prewarmResizes[key] { Task(priority: .high) { await task.value } }
            return false
        default:
            return true
        }
    }

    private func run(_ actions: [State.Action]) {
        for action in actions {
            switch action {
            case .answer(let waiters, let answer):
                for waiter in waiters { waiter.resume(returning: answer) }
            case .lookUp(let key, let tier):
                Task { await lookUp(key, tier: tier) }
            case .readItem(let key):
                Task(priority: Task.currentPriority) { await readItem(of: key) }
            case .fetchOriginal(let itemID, let item, _):
                // A reader waits on urgent work: it goes ahead of pre-warm's in the fetch and libvips
                // queues (pre-warm's own was started under the lock, `runLocked`).
                Task(priority: .high) { await fetchOriginal(itemID, of: item, urgent: true) }
            case .promoteFetch(_, let item):
                // A fetch already waiting for a connection moves up.
                if let url = origin.url(for: item) { fetcher.promote(url) }
            case .resize(let key, let original, _):
                Task(priority: .high) { await resize(key, original: original) }
            case .promoteResize:
                break
            case .store(let key, let bytes, let indices):
                Task(priority: .low) {
                    for index in indices { await tiers[index].write(key, bytes) }
                }
            case .storeFailure(let key, let seconds, let tier):
                // Other nodes may be waiting on it: not held back behind pre-warm's work.
                Task(priority: .medium) { await shared(tier)?.rememberFailure(key, seconds: seconds) }
            case .readOriginal(let itemID):
                Task(priority: Task.currentPriority) { await readOriginal(itemID) }
            case .claimOriginal(let itemID, let tier):
                Task(priority: Task.currentPriority) { await claimOriginal(itemID, tier: tier) }
            case .keepOriginal(let itemID, let bytes, let owningIn):
                // Written before the owner record: a node that reads the record finds the original here.
                // Not held back behind pre-warm's work: other nodes may be waiting for the record.
                Task(priority: .medium) {
                    originalStore?.write(itemID, bytes)
                    if let owningIn { await shared(owningIn)?.ownOriginal(itemID) }
                }
            case .originalFailed(let itemID, let seconds, let tier):
                Task(priority: .medium) { await shared(tier)?.originalFailed(itemID, seconds: seconds) }
            case .releaseOriginalClaim(let itemID, let tier):
                Task(priority: .low) { await shared(tier)?.releaseOriginal(itemID) }
            case .askOwner(let key, let owner, let urgent):
                Task(priority: urgent ? .high : .low) { await askOwner(key, owner: owner, urgent: urgent) }
            case .forgetOwner(let itemID, let url, let tier):
                Task(priority: .low) { await shared(tier)?.forgetOwner(itemID, url: url) }
            case .release(let values):
                metrics.evicted(values.count)
            }
        }
    }
}
