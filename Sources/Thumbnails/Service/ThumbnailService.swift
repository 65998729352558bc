import CoreMetrics
import HTTPServer
import ImageFormats
import Logging
import OriginFetcher
import ServiceLifecycle
import Synchronization
import ThreadSlots
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
/// Each action's result goes back into the state machine as an event, and the
/// task that did one step of a job does its next (`ThumbnailService+Running`),
/// inside this service's task group, so SIGTERM reaches the work in flight.
package final class ThumbnailService: Service, StatsPublisher, Sendable {
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
        var prewarmFetches: [Picture: Task<Void, Never>] = [:]
        /// The bytes of each original fetched, counted in `bodies` until no resize holds it.
        var leases: [Picture: [BodyLease]] = [:]
    }

    let locked: Mutex<Locked>
    /// Work the machine's actions asked for, for `run()` to start inside its task group.
    let work = AsyncStream.makeStream(of: Work.self)
    /// The machine's memory, read by the server threads without its lock.
    private let memory: StripedCache<ThumbnailKey, PreparedResponse>
    /// Readers' hits found in `memory` without the lock (counter 0), and
    /// readers who took AVIF but were answered with the WebP because the AVIF
    /// was not made yet (1), counted per thread (a word every thread wrote
    /// would be a lock by another name).
    private let lockFreeHits = ThreadCounters(count: 2)
    /// When AVIF is made: for which readers, by whom, how many at once.
    let avif: AVIFPolicy
    /// Readers on dense screens (a 2x asked, from memory or not): pre-warm makes 2x while they are about.
    private let denseDemand = DemandWindow()
    /// Thumbnails a peer answered with bytes that were not one (`askOwner`).
    let ownerAnswersRefused = Atomic<Int>(0)
    /// The largest answer a peer may give for a thumbnail, in bytes.
    static let largestPeerAnswer = 1 << 20
    /// How long a first failure is remembered, in seconds (fixed at the start).
    let firstFailureSeconds: Double
    private let waiterIDs = Atomic<UInt64>(0)
    /// The lookup tiers, in the order the state machine numbers them.
    let tiers: [any ThumbnailTier]
    let fetcher: OriginFetcher
    /// The bytes of originals fetched and not yet let go by the resizes, as
    /// they arrive: the machine's resizing budget (half the originals') and a
    /// quarter more. The machine paces fetches to its budget by what
    /// originals weigh; the quarter keeps an honest origin's bodies from
    /// pausing at the margin (at exactly the budget they paused 225 times a
    /// second in `bench/mixed.sh`, and the mix lost a quarter of its requests
    /// a second), and the allowance bounds what an origin whose sizes surprise
    /// the pacing can make the server hold.
    let bodies: BodyAllowance
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
    /// The longest a request waits for its thumbnail before it is answered
    /// without (see `ThumbnailRoutes`); the job goes on for the next reader.
    package let answerWithin: Duration
    /// This node's name, sent when it asks another node for a thumbnail.
    let nodeName: String
    /// The hosts whose refusal was told already (`isRefusal`).
    let refusalsLogged = Mutex(RefusalLog())

    /// The longest a reader's thumbnail request waits unless told: 10 s.
    package static let defaultAnswerWithin: Duration = .seconds(10)

    package init(
        store: any FeedStore, memoryBudget: Int, originalsBudget: Int, negativeTTL: (first: Double, longest: Double), tiers: [any ThumbnailTier],
        fetcher: OriginFetcher,
        thumbnailer: Thumbnailer, origin: ImageSource, limits: FetchLimits, clock: Uptime, metrics: any MetricsFactory,
        previews: PreviewKeeper? = nil, originalStore: OriginalStore? = nil, prewarmMakesMissedAVIF: Bool = false,
        answerWithin: Duration = ThumbnailService.defaultAnswerWithin, nodeName: String = "warmfeed", logger: Logger = Logger(label: "warmfeed.thumbnails")
    ) {
        self.logger = logger
        self.answerWithin = answerWithin
        self.nodeName = nodeName
        avif = AVIFPolicy(prewarmMakesMissed: prewarmMakesMissedAVIF)
        self.previews = previews
        self.store = store
        self.originalStore = originalStore
        let machine = State(
            memoryBudget: memoryBudget, originalsBudget: originalsBudget, lookupTiers: tiers.count,
            claimTier: tiers.firstIndex { $0 is any SharedThumbnailTier }, keepsOriginals: originalStore != nil,
            negativeTTL: negativeTTL.longest, firstNegativeTTL: negativeTTL.first
        )
        firstFailureSeconds = machine.firstNegativeTTL
        bodies = BodyAllowance(bytes: machine.resizingBudget + machine.resizingBudget / 4)
        memory = machine.memory
        locked = Mutex(Locked(machine: machine))
        self.tiers = tiers
        self.fetcher = fetcher
        self.thumbnailer = thumbnailer
        self.origin = origin
        self.limits = limits
        self.clock = clock
        self.metrics = ThumbnailMetrics(factory: metrics)
    }

    /// The thumbnail if it is in memory now (counted as a reader's hit),
    /// without waiting and without the machine's lock: the path every
    /// warm thumbnail takes, on every server thread at once.
    func cached(_ key: ThumbnailKey) -> PreparedResponse? {
        guard let value = memory.value(for: key) else { return nil }
        lockFreeHits.add(0)
        if key.variant.scale > 1 { denseDemand.note(at: clock.now) }
        return value
    }

    /// A reader's browser takes `format` (its `Accept` says so): pre-warm makes it while such readers are about.
    func noteDemand(for format: ImageFormat) {
        guard format == .avif else { return }
        avif.noteDemand(at: clock.now)
    }

    /// The formats pre-warm makes now (`AVIFPolicy.formats(at:)`).
    package var formatsInDemand: [ImageFormat] { avif.formats(at: clock.now) }

    /// A reader who takes AVIF was given the WebP: the AVIF was not made yet.
    /// It is made for whoever comes next, and never waited for: by pre-warm
    /// when it has CPU to spare, or, without pre-warm, now, behind all WebP
    /// work (`AVIFPolicy.answeredWithout`).
    func answeredWithoutAVIF(_ key: ThumbnailKey) {
        lockFreeHits.add(1)
        guard avif.answeredWithout(key) else { return }
        spawn(priority: .background) {
            _ = await self.ask(key, of: nil, from: .prewarm)
            self.avif.releaseAhead()
        }
    }

    /// The AVIF readers were answered without since the last call, once there are any (`AVIFPolicy.nextMissed`).
    package func nextMissedAVIF(limit: Int) async -> [ThumbnailKey] { await avif.nextMissed(limit: limit) }

    /// Lets go of the memory tier's replaced tables no reader can hold any more (every few seconds).
    package func reclaim() { memory.reclaim() }

    /// The scales pre-warm makes now: 1x always, 2x while readers on dense
    /// screens are about (`DemandWindow`). Read without the machine's lock.
    package var scalesInDemand: [Int] {
        denseDemand.isOpen(at: clock.now) ? ThumbnailVariant.scales : [1]
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

    /// The key of `item`'s thumbnail in `variant`, as it is now in this store;
    /// nil when it has no picture.
    package func key(of item: FeedItem, _ variant: ThumbnailVariant) -> ThumbnailKey? {
        Picture(item: item, epoch: store.epoch).map { ThumbnailKey(picture: $0, variant: variant) }
    }

    /// What item `id` shows now, as the store says.
    enum CurrentPicture: Sendable, Equatable {
        case picture(Picture)
        /// It has no picture, or the store does not answer: the placeholder.
        case noPicture
        case noSuchItem
    }

    /// The picture item `id` has now, read from the store.
    func currentPicture(of id: Int64) async -> CurrentPicture {
        let item: FeedItem?
        do { item = try await store.item(id: id) } catch { return .noPicture }
        guard let item else { return .noSuchItem }
        return Picture(item: item, epoch: store.epoch).map { .picture($0) } ?? .noPicture
    }

    /// A reader whose browser takes only AVIF: the AVIF is made at pre-warm's
    /// pace, behind its pages (`Asker.patientReader`), and waited for; at most
    /// `AVIFPolicy.aheadLimit` such jobs at once, past which the answer is `nil` (busy).
    func patientThumbnail(_ key: ThumbnailKey) async -> Outcome? {
        guard avif.reserveAhead() else { return nil }
        defer { avif.releaseAhead() }
        switch await ask(key, of: nil, from: .patientReader) {
        case .image(let prepared): return .image(prepared)
        case .placeholder, .released: return .placeholder
        case .noSuchItem: return .noSuchItem
        }
    }

    /// Pre-warm: makes the thumbnail if nothing has it or is making it, and
    /// waits for the job it started; returns at once otherwise.
    package func warm(_ key: ThumbnailKey, of item: FeedItem) async {
        _ = await ask(key, of: item, from: .prewarm)
    }

    /// Pre-warm, for a thumbnail known by its key alone (an AVIF a reader
    /// missed): as `warm(_:of:)`, reading the item when it must be made.
    package func warm(_ key: ThumbnailKey) async {
        _ = await ask(key, of: nil, from: .prewarm)
    }

    private func ask(_ key: ThumbnailKey, of item: FeedItem?, from asker: State.Asker) async -> State.Answer {
        let id = waiterIDs.add(1, ordering: .relaxed).newValue
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: Waiter) in
                let now = clock.now
                // Pre-warm asking for a 2x is no reader on a dense screen.
                if asker != .prewarm, key.variant.scale > 1 { denseDemand.note(at: now) }
                let steps = apply { locked in
                    let (_, actions) = locked.machine.request(key, of: item, waiter: (id, waiter), from: asker, now: now)
                    return actions
                }
                // A job a reader waits on goes ahead of pre-warm's, from its first step.
                start(steps, priority: asker == .reader ? .high : asker == .prewarm ? .low : .background)
                // Cancelled before the waiter was registered: the handler below has run already and found nothing.
                if Task.isCancelled { start(apply { $0.machine.cancel(waiter: id, of: key) }) }
            }
        } onCancel: {
            start(apply { $0.machine.cancel(waiter: id, of: key) })
        }
    }

    /// The thumbnails' sections of the operator's views (`StatsPublisher`):
    /// the tiers, the counts of readers' requests, the origin and libvips, and
    /// a cluster's shared tier (what Redis holds, with the claims this cache
    /// counted). The machine's numbers are read in one go, under its lock.
    package func publish(into stats: inout CacheStats) {
        let (machineCounters, usage, originLatency, thumbnailLatency) = locked.withLock {
            ($0.machine.counters, $0.machine.usage, $0.machine.originLatency, $0.machine.thumbnailLatency)
        }
        var counters = machineCounters
        counters.hits += lockFreeHits.value(0)
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
        publishMemory(into: &stats)
        stats.resizes = counters.resizes
        stats.avifFallbacks = lockFreeHits.value(1)
        let fetched = fetcher.stats
        (stats.origin.fetches, stats.origin.errors, stats.origin.inFlight) = (counters.originFetches, counters.originErrors, fetched.inFlight)
        (stats.origin.busy, stats.origin.cancelled, stats.origin.retried) = (fetched.busy, fetched.cancelled, fetched.retriedOnNewConnection)
        stats.origin.refused = fetched.refused
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
            shared.ownerAnswersRefused = ownerAnswersRefused.load(ordering: .relaxed)
            stats.shared = shared
        }
    }
}
