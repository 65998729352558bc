import Logging
import ServiceLifecycle
import Synchronization
import WarmfeedCore

/// Warms the pages ahead of each reader: renders them and makes their thumbnails.
///
/// The `PrewarmPlanner` decides what and in which order; this service runs up
/// to `concurrency` page jobs at a time, each making its page's thumbnails a few
/// at a time, and cancels jobs the planner no longer wants. A reader's own
/// thumbnail request never queues behind this work: it starts at once, or
/// joins the job pre-warm already started.
final class Prewarmer: Service, Sendable {
    typealias Job = PrewarmPlanner<PageQuery>.Job

    private let planner: Mutex<PrewarmPlanner<PageQuery>>
    private let running = Mutex([Int: Task<Void, Never>]())
    private let wake: AsyncStream<Void>.Continuation
    private let wakes: AsyncStream<Void>
    private let thumbnails: ThumbnailService
    private let pages: any PrewarmPages
    private let clock: Uptime
    private let concurrency: Int
    private let thumbnailsAtOnce: Int
    private let lastRevision = Mutex(-1)
    let logger: Logger

    /// A pre-warmer warming `lead` pages ahead of each reader, reading pages
    /// from `pages` and the time from `clock`.
    init(
        lead: Int, pages: any PrewarmPages, thumbnails: ThumbnailService, clock: Uptime,
        concurrency: Int = 2, thumbnailsAtOnce: Int = 4, logger: Logger
    ) {
        planner = Mutex(PrewarmPlanner(lead: lead))
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.pages = pages
        self.thumbnails = thumbnails
        self.clock = clock
        self.concurrency = max(1, concurrency)
        self.thumbnailsAtOnce = max(1, thumbnailsAtOnce)
        self.logger = logger
    }

    /// A reader was served page `number`, whose neighbours are `older` and
    /// `newer`, at store revision `revision`.
    func readerViewed(_ reader: String, number: Int, older olderCursor: Cursor?, newer newerCursor: Cursor?, revision: Int) {
        let (older, newer) = Self.neighbours(older: olderCursor, newer: newerCursor, number: number)
        viewed(reader, number: number, older: older, newer: newer, revision: revision)
    }

    /// New items landed at the top of the feed (store revision `revision`): warm
    /// the first pages as if a reader stood just above page 1, so the first
    /// readers find them warm.
    func warmTop(revision: Int) {
        viewed("~refresh", number: 0, older: PageQuery(request: .number(1), number: 1), newer: nil, revision: revision)
    }

    private func viewed(_ reader: String, number: Int, older: PageQuery?, newer: PageQuery?, revision: Int) {
        let changed = lastRevision.withLock { last in
            defer { last = revision }
            return last != revision
        }
        let now = clock.now
        let cancel = planner.withLock { planner -> [Job] in
            if changed { planner.forgetWarmed() }
            return planner.readerViewed(reader, page: number, older: older, newer: newer, now: now)
        }
        for job in cancel {
            running.withLock { $0[job.page] }?.cancel()
        }
        wake.yield()
    }

    /// Counters and queue depth for the admin view.
    var snapshot: (queued: Int, running: Int, counters: PrewarmPlanner<PageQuery>.Counters, readers: Int) {
        planner.withLock { ($0.load.queued, $0.load.running, $0.counters, $0.readerCount) }
    }

    func run() async throws {
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                for await _ in wakes {
                    while running.withLock({ $0.count }) < concurrency, let job = planner.withLock({ $0.nextJob() }) {
                        // Low priority: a reader's own thumbnail overtakes pre-warm work in the libvips queue.
                        let task = Task(priority: .low) { await self.warm(job) }
                        running.withLock { $0[job.page] = task }
                        group.addTask { await task.value }
                    }
                }
            }
        } onGracefulShutdown: {
            self.wake.finish()
            for task in self.running.withLock({ Array($0.values) }) { task.cancel() }
        }
    }

    private func warm(_ job: Job) async {
        defer {
            running.withLock { _ = $0.removeValue(forKey: job.page) }
            wake.yield()
        }
        guard let (page, number) = await pages.pageForWarming(job.target) else {
            planner.withLock { $0.finished(job, older: nil, newer: nil) }
            return
        }
        // All 1x first (what most screens ask for), then 2x when dense screens are
        // about, which then finds the original already fetched.
        var keys: [(ThumbnailKey, FeedItem)] = []
        for scale in thumbnails.scalesInDemand {
            for item in page.items where item.imageURL != nil {
                guard let id = item.id else { continue }
                keys.append((ThumbnailKey(itemID: id, variant: ThumbnailVariant(scale: scale, format: .webp)), item))
            }
        }
        // In page order: the reader meets the top of the page first.
        await withTaskGroup(of: Void.self) { group in
            for (index, (key, item)) in keys.enumerated() {
                if Task.isCancelled { break }
                // Keep at most `thumbnailsAtOnce` in flight.
                if index >= thumbnailsAtOnce { await group.next() }
                group.addTask { await self.thumbnails.warm(key, of: item) }
            }
        }
        let (older, newer) = Self.neighbours(older: page.older, newer: page.newer, number: number)
        let cancelled = Task.isCancelled
        planner.withLock { planner in
            if cancelled { planner.cancelled(job) } else { planner.finished(job, older: older, newer: newer) }
        }
    }

    static func neighbours(older: Cursor?, newer: Cursor?, number: Int) -> (older: PageQuery?, newer: PageQuery?) {
        (
            older.map { PageQuery(request: .after($0), number: number + 1) },
            newer.map { PageQuery(request: .before($0), number: max(1, number - 1)) }
        )
    }
}

