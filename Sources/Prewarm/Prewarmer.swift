import FeedPages
import Logging
import ServiceLifecycle
import Synchronization
import ThreadSlots
import Thumbnails
import WarmfeedCore

/// Warms the pages ahead of each reader: renders them and makes their thumbnails.
///
/// The `PrewarmPlanner` decides everything: what to warm, in which order, how
/// many jobs run at once, which to cancel, when the feed changed. This service
/// holds it under one lock together with the tasks carrying out its running
/// jobs, and does what each decision returns once the lock is released: a
/// task per job started (each making its page's thumbnails a few at a time),
/// a cancellation per job no reader wants. A reader's own thumbnail request
/// never queues behind this work: it starts at once, or joins the job
/// pre-warm already started.
package final class Prewarmer: Service, StatsPublisher, ReaderTracking, Sendable {
    typealias Planner = PrewarmPlanner<PageQuery, Follower>

    /// Whom the planner follows: a reader, by their cookie's id as the rings
    /// carry it (a number: no string made per view), or the stand-in `warmTop`
    /// places just above page 1, which no reader's id can be.
    enum Follower: Hashable {
        case reader(UInt64)
        case top
    }
    typealias Job = Planner.Job

    /// Everything the decisions touch, under the one lock.
    struct State {
        var planner: Planner
        var tasks = PrewarmTasks()
        /// The AVIF line waiting for every page job to end (`whenPagesWarm`).
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        /// Shutdown: the AVIF line waits for nothing more.
        var avifStopped = false
        /// Pages on the AVIF line (the one being made included), and pages it let go.
        var avifPages = (waiting: 0, dropped: 0)

        /// Whether no page job is queued or running.
        var isIdle: Bool { planner.load.queued == 0 && planner.load.running == 0 }

        /// Records the planner's `actions` in the tasks table and returns what
        /// is left to do outside the lock.
        mutating func take(_ actions: [Planner.Action]) -> Work {
            var work = Work()
            for action in actions {
                switch action {
                case .start(let job):
                    work.start.append(tasks.start(job))
                case .cancel(let job):
                    if let task = tasks.cancel(page: job.page) { work.cancel.append(task) }
                }
            }
            return work
        }
    }

    /// What to do once the lock is released.
    struct Work {
        var start: [PrewarmTasks.Start] = []
        var cancel: [Task<Void, Never>] = []
    }

    let state: Mutex<State>
    /// When the top was last asked to be warm, and how long page 1 then took (seconds of uptime).
    private let top = Mutex<(askedAt: Double?, warmAfter: Double?)>((nil, nil))
    /// Jobs started by the planner, whose tasks `run` makes inside its task
    /// group, so that they are part of the service and end with it.
    private let starts: AsyncStream<PrewarmTasks.Start>
    private let startsInput: AsyncStream<PrewarmTasks.Start>.Continuation
    /// Pages whose WebP is made and whose AVIF is to make next (`makeAVIF`),
    /// the newest `avifLine.pagesWaiting` kept.
    let avifPages: AsyncStream<AVIFPage>
    let avifPagesInput: AsyncStream<AVIFPage>.Continuation
    private let pages: any PrewarmPages
    let thumbnails: any ThumbnailWarming
    let clock: Uptime
    private let thumbnailsAtOnce: Int
    /// In a cluster: who warms a page's thumbnails (the first node to ask;
    /// the others wait for it, then find them in the shared tier).
    private let claims: (any PageWarmingClaims)?
    let logger: Logger
    /// Readers' page views, recorded without a lock, drained into the planner (`Prewarmer+Readers`).
    let views = ReaderViews()
    /// Drains run one at a time (the loop's, and the admin view's); never on a reader's path.
    let draining = Mutex(())
    /// Set at shutdown: the drain loop ends.
    let viewsStopped = Atomic<Bool>(false)
    /// Wakes the drain loop from its sleep when a view is recorded after an idle spell.
    let viewsBell = Doorbell()

    /// A pre-warmer as `configuration` says (pages warmed ahead of each
    /// reader, pages and thumbnails at once, page 1's hold), reading pages
    /// from `pages`, warming thumbnails through `thumbnails`, claiming pages
    /// through `claims` (a cluster's shared tier) and reading the time from `clock`.
    package init(
        _ configuration: PrewarmConfiguration, pages: any PrewarmPages, thumbnails: any ThumbnailWarming, claims: (any PageWarmingClaims)? = nil,
        clock: Uptime, logger: Logger
    ) {
        let (lead, concurrency, thumbnailsAtOnce, pageOneHold) =
            (configuration.pages, configuration.pagesAtOnce, configuration.thumbnailsAtOnce, configuration.pageOneHold)
        self.claims = claims
        startGate = StartGate(limit: pageOneHold)
        state = Mutex(State(planner: Planner(lead: lead, concurrency: concurrency)))
        (starts, startsInput) = AsyncStream.makeStream(of: PrewarmTasks.Start.self)
        (avifPages, avifPagesInput) = AsyncStream.makeStream(of: AVIFPage.self, bufferingPolicy: .bufferingNewest(thumbnails.avifLine.pagesWaiting))
        self.pages = pages
        self.thumbnails = thumbnails
        self.clock = clock
        self.thumbnailsAtOnce = max(1, thumbnailsAtOnce)
        self.logger = logger
    }

    /// New items landed at the top of the feed, or the server has just
    /// started (store revision `revision`): warm the first pages as if a reader
    /// stood just above page 1, so the first readers find them warm; with
    /// `holdingPageOne` (at start), page 1 is answered once it is warm.
    ///
    /// At start no reader has said what screen they read on (a browser's
    /// first request carries no `Sec-CH-DPR`): the first pages are made in
    /// every density, so a phone's first screen, and the page after it, are as
    /// warm as a desktop's (on a fresh server a phone's 2x of pages 1 and 2
    /// were all misses: 3 of 5 thumbnails of its first screen late, and 51 of
    /// 300 at 3,000 px/s). Formats are those in demand, WebP alone at start:
    /// AVIF costs several times a WebP's CPU, and it is made once a reader
    /// whose browser takes it is about (the first one's own thumbnails are
    /// answered in WebP at once, their AVIF made after). Later, new items are
    /// warmed in the densities and formats in demand.
    package func warmTop(revision: Int, holdingPageOne: Bool = false) {
        if holdingPageOne { startGate.close() }
        let now = clock.now
        top.withLock { $0 = (now, nil) }
        viewed(
            Self.top, number: 0, older: PageQuery(request: .number(1), number: 1), newer: nil, revision: revision,
            variants: ThumbnailVariant.bits(
                scales: holdingPageOne ? ThumbnailVariant.scales : thumbnails.scalesInDemand, formats: thumbnails.formatsInDemand))
    }

    /// Page 1's requests wait here while the start's warm-up runs (see `StartGate`).
    package let startGate: StartGate

    /// How long page 1 took to be warm (rendered, its thumbnails made) after
    /// the last `warmTop`, in seconds; nil while it is not yet.
    var topWarmAfter: Double? { top.withLock { $0.warmAfter } }

    private func viewed(_ reader: Follower, number: Int, target: PageQuery? = nil, older: PageQuery?, newer: PageQuery?, revision: Int, variants: UInt8) {
        let now = clock.now
        decide { state in
            state.planner.readerViewed(reader, page: number, target: target, older: older, newer: newer, revision: revision, variants: variants, now: now)
        }
    }

    /// The reader `warmTop` stands in for, just above page 1 (not a reader: not counted as one).
    private static let top = Follower.top

    /// Pre-warm's section of the operator's views.
    package func publish(into stats: inout CacheStats) {
        // What the operator sees includes the views recorded a moment ago.
        drainViews()
        let warm = snapshot
        let leads = leads
        stats.prewarm.queued = warm.queued
        stats.prewarm.running = warm.running
        (stats.prewarm.done, stats.prewarm.cancelled, stats.prewarm.dropped) = (warm.counters.done, warm.counters.cancelled, warm.counters.dropped)
        stats.prewarm.readers = warm.readers
        stats.prewarm.pageOneWarmSeconds = topWarmAfter
        stats.prewarm.leads = Dictionary(uniqueKeysWithValues: leads.leads.map { (String($0.key), $0.value) })
        stats.prewarm.pageWarmSeconds = leads.warmSeconds
        (stats.prewarm.avifPagesWaiting, stats.prewarm.avifPagesDropped) = state.withLock { $0.avifPages }
        let views = views.totals
        (stats.prewarm.views, stats.prewarm.viewsDropped) = (views.drained, views.dropped)
    }

    /// Counters and queue depth for the admin view; `readers` counts real readers only.
    var snapshot: (queued: Int, running: Int, counters: Planner.Counters, readers: Int) {
        state.withLock {
            let readers = $0.planner.readerCount - ($0.planner.isFollowing(Self.top) ? 1 : 0)
            return ($0.planner.load.queued, $0.planner.load.running, $0.planner.counters, readers)
        }
    }

    /// The leads readers have now (lead → readers, the stand-in above page 1
    /// left out) and the seconds a page takes to warm, smoothed.
    var leads: (leads: [Int: Int], warmSeconds: Double?) {
        state.withLock { state in
            var leads = state.planner.leads
            if let top = state.planner.lead(of: Self.top)?.lead {
                leads[top, default: 0] -= 1
                if leads[top] == 0 { leads[top] = nil }
            }
            return (leads, state.planner.warmSeconds)
        }
    }

    /// Makes a task for each job the planner starts, inside this service's task
    /// group, until graceful shutdown cancels the running ones and waits for them.
    package func run() async throws {
        let avif = [Task(priority: .background) { await self.makeAVIF() }, Task(priority: .background) { await self.makeMissedAVIF() }]
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await withDiscardingTaskGroup { group in
                    for task in avif { group.addTask { await task.value } }
                    group.addTask { await self.drainViewsUntilShutdown() }
                    if !startGate.isOpen { group.addTask { await self.startGate.openAfterLimit() } }
                    for await start in starts {
                        // Low priority: a reader's own thumbnail overtakes pre-warm work in the libvips queue.
                        let task = Task(priority: .low) { await self.warm(start) }
                        group.addTask { await task.value }
                        state.withLock { $0.tasks.made(task, for: start) }?.cancel()
                    }
                }
            } onGracefulShutdown: {
                self.viewsStopped.store(true, ordering: .relaxed)
                self.viewsBell.close()
                self.startsInput.finish()
                self.stopAVIF(avif)
                self.startGate.open()
                for task in self.state.withLock({ $0.tasks.cancelAll() }) { task.cancel() }
            }
        } onCancel: {
            // Cancelled without a graceful shutdown: the AVIF lines are tasks of their own, which the group's cancellation does not reach.
            self.stopAVIF(avif)
        }
    }

    /// Ends the AVIF lines: no more pages or keys, the one waiting for spare CPU let go, their tasks cancelled.
    private func stopAVIF(_ tasks: [Task<Void, Never>]) {
        avifPagesInput.finish()
        for task in tasks { task.cancel() }
        let waiters = state.withLock { state in
            state.avifStopped = true
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Gives the planner one event under the lock, and carries out its
    /// actions once the lock is released. What it counts is the planner's
    /// (`publish(into:)`): `/metrics` reads it there.
    func decide(_ event: (inout State) -> [Planner.Action]) {
        let (work, idle) = state.withLock { state in
            let work = state.take(event(&state))
            var idle: [CheckedContinuation<Void, Never>] = []
            if state.isIdle { swap(&idle, &state.idleWaiters) }
            return (work, idle)
        }
        perform(work)
        for waiter in idle { waiter.resume() }
    }

    /// Returns once no page job is queued or running (at once if none is), or at shutdown.
    func whenPagesWarm() async {
        await withCheckedContinuation { waiter in
            let now = state.withLock { state in
                if state.isIdle || state.avifStopped { return true }
                state.idleWaiters.append(waiter)
                return false
            }
            if now { waiter.resume() }
        }
    }

    private func perform(_ work: Work) {
        for task in work.cancel { task.cancel() }
        for start in work.start { startsInput.yield(start) }
    }

    private func warm(_ start: PrewarmTasks.Start) async {
        let job = start.job
        var outcome: (cancelled: Bool, older: PageQuery?, newer: PageQuery?) = (false, nil, nil)
        if let (page, number) = await pages.pageForWarming(job.target) {
            // The page is warm once its WebP is made: every reader can be answered with it
            // at once. Its AVIF follows on a line of its own (`makeAVIF`), so the lead moves on.
            let variants = ThumbnailVariant.variants(inBits: job.variants)
            await makeThumbnails(of: page, variants: variants.filter { $0.format != .avif })
            if !Task.isCancelled, number == 1 { topIsWarm() }
            let avif = variants.filter { $0.format == .avif }
            if !Task.isCancelled, !avif.isEmpty { queueAVIF(AVIFPage(page: page, variants: avif)) }
            let (older, newer) = Self.neighbours(older: page.older, newer: page.newer, number: number)
            outcome = (Task.isCancelled, older, newer)
        }
        decide { state in
            state.tasks.ended(start)
            return outcome.cancelled
                ? state.planner.cancelled(job, now: clock.now)
                : state.planner.finished(job, older: outcome.older, newer: outcome.newer, now: clock.now)
        }
    }

    /// Makes `page`'s thumbnails in `variants` (those its readers' screens and
    /// browsers ask for), `atOnce` at a time (`thumbnailsAtOnce` when not
    /// said), each once `turn` returns (when given).
    func makeThumbnails(
        of page: Page, variants: [ThumbnailVariant], atOnce: Int? = nil, turn: (@Sendable () async -> Void)? = nil
    ) async {
        let atOnce = atOnce ?? thumbnailsAtOnce
        guard !variants.isEmpty else { return }
        // Named by what it shows and the sizes made, so a page warmed by one node
        // (whatever cursor or revision it was reached by) is not warmed again by another.
        var claimed: String?
        if let claims, let first = page.items.first?.id, let last = page.items.last?.id {
            let name = "\(first)-\(last)-\(page.items.count)-\(variants.map { "\($0.name)\($0.format.rawValue)" }.joined())"
            guard await claims.claimPage(name) else { return }
            claimed = name
        }
        defer { if let claims, let claimed, !Task.isCancelled { Task { await claims.pageWarmed(claimed) } } }
        // All 1x first (what most screens ask for), then 2x, which then finds the
        // original already fetched (or its owner).
        var keys: [(ThumbnailKey, FeedItem)] = []
        for variant in variants {
            for item in page.items {
                guard let key = thumbnails.key(of: item, variant) else { continue }
                keys.append((key, item))
            }
        }
        // In page order: the reader meets the top of the page first.
        await withTaskGroup(of: Void.self) { group in
            for (index, (key, item)) in keys.enumerated() {
                if Task.isCancelled { break }
                // Keep at most `atOnce` in flight.
                if index >= atOnce { await group.next() }
                if let turn {
                    await turn()
                    if Task.isCancelled { break }
                }
                group.addTask { await self.thumbnails.warm(key, of: item) }
            }
        }
    }

    /// Page 1 is warm: the first time since the last `warmTop`, say so.
    private func topIsWarm() {
        let now = clock.now
        let after = top.withLock { top -> Double? in
            guard let asked = top.askedAt, top.warmAfter == nil else { return nil }
            top.warmAfter = now - asked
            return top.warmAfter
        }
        if let after { logger.info("page 1 is warm", metadata: ["seconds": "\((after * 1000).rounded() / 1000)"]) }
        startGate.open()
    }

    static func neighbours(older: Cursor?, newer: Cursor?, number: Int) -> (older: PageQuery?, newer: PageQuery?) {
        (
            older.map { PageQuery(request: .after($0), number: number + 1) },
            newer.map { PageQuery(request: .before($0), number: max(1, number - 1)) }
        )
    }
}
