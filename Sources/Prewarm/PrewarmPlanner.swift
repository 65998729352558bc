import WarmfeedCore

/// Decides which pages to warm ahead of each reader, as a pure state machine.
///
/// When a reader is served page N, the pages they are about to reach, N+1 …
/// N+lead in the direction they are moving, are wanted, and one page behind
/// them (the trailing side, warmed last; the leading and trailing sides swap
/// when the reader turns back, as in Texture's range controller). Each
/// reader's lead follows their pace: the planner times the pages a reader is
/// served and the jobs it runs, and gives a reader the pages they will cross
/// in three times the time a page takes to warm, from 1 up to `maxLead`; a
/// reader whose pace is not known yet gets `lead`. A reader who lands on a page
/// by a jump (a deep link, a fling) gets that page itself warmed first, then
/// the pages after it. A job warms one page
/// (renders it, makes its thumbnails) and, when it ends, reveals the page after
/// it, which is queued in turn while still within reach. Jobs nearest a reader
/// run first. When a reader jumps (a fling, a deep link) or turns back, jobs no
/// reader wants any more are dropped from the queue, and running ones are
/// returned to be cancelled, as UIKit's `cancelPrefetching` does on a device.
/// The planner also owns the whole plan around that: at most `concurrency`
/// jobs run at once, and a change of the store's revision makes every page
/// worth warming again. Each event returns the `Action`s that follow from it.
/// Each reader also says which variants of a thumbnail their screen asks for
/// (a bit each: 1x, 2x, …), and a page is warmed in the variants its readers
/// want and no other: a page warmed for a plain screen is warmed again, in 2x
/// only, when a dense one heads for it; a plain screen's pages cost no 2x.
/// Readers are told apart by a `ReaderID` (pre-warm's is a number: the
/// reader's cookie). No I/O, no clock, no locks: the caller passes `now` and
/// acts on the result.
public struct PrewarmPlanner<Target: Hashable, ReaderID: Hashable> {
    /// One page to warm.
    public struct Job: Hashable {
        /// The page number.
        public var page: Int
        /// How to ask the store for it.
        public var target: Target
        /// The variants to make its thumbnails in, a bit each (as readers give them).
        public var variants: UInt8

        /// A job for `page`, in `variants` (1x alone by default).
        public init(page: Int, target: Target, variants: UInt8 = 1) {
            self.page = page
            self.target = target
            self.variants = variants
        }
    }

    /// What the caller must do after an event, once its lock is released.
    public enum Action: Hashable {
        /// Warm this job's page, then report it with `finished` or `cancelled`.
        case start(Job)
        /// No reader wants this running job any more: stop it, then report it
        /// with `cancelled` (or `finished`, if it ended first).
        case cancel(Job)
    }

    /// Counters for the admin view.
    public struct Counters: Sendable, Equatable {
        /// Jobs finished.
        public var done = 0
        /// Jobs dropped or cancelled because no reader wanted them any more.
        public var cancelled = 0
        /// Jobs refused because the queue was full.
        public var dropped = 0
    }

    struct Reader {
        var page: Int
        var direction: Int
        var seen: Double
        /// When the reader last changed page.
        var movedAt: Double
        /// Pages a second, once two steps have been timed.
        var pace: Double?
        /// Pages warmed ahead of them, as their demand was counted.
        var lead: Int
        /// Pages ahead they reach within one warm-up, as their demand was counted.
        var reach = 0
        /// The variants their screen asks for, a bit each.
        var variants: UInt8 = 1
    }

    /// Pages warmed ahead of a reader whose pace is not known yet.
    public let lead: Int
    /// The most pages warmed ahead of any reader: at most `leadCap`.
    public let maxLead: Int
    /// The largest `maxLead`: a page's readers are counted by rank in a
    /// fixed block (`PageDemand`), whose 64 ranks hold 2 × 31 + 2. Above
    /// the 20 pages `--prewarm` takes, so no lead an operator sets is cut.
    public static var leadCap: Int { 31 }
    /// The most jobs queued at once.
    public let maxQueued: Int
    /// Seconds after which a silent reader is forgotten.
    public let readerTTL: Double
    /// The most readers tracked at once.
    public let maxReaders: Int
    /// The most jobs running at once; a job asked to cancel keeps its place
    /// until it is reported, since its work has not stopped yet.
    public let concurrency: Int
    /// The store revision the plan is for; nil before the first view.
    public private(set) var revision: Int?

    /// Readers by recency (each view makes its reader the newest), so the
    /// silent and the surplus are found at the old end: O(1) per reader,
    /// whatever the number tracked.
    private(set) var readers: LRUCache<ReaderID, Reader>
    /// Everything known of each page in play, in one table: the readers who
    /// want it, the variants warmed, how to ask for it and whether a job for
    /// it waits or runs (`PageState`). A view looks each page up once.
    var pages: [Int: PageState] = [:]
    /// `pages` is swept of pages no reader wants and no job holds once it
    /// holds more than this: see `sweepIfLarge`.
    private var sweepAt = Self.pagesKept
    /// Jobs waiting, at most `maxQueued`: looked over once a decision.
    private var queued: [Job] = []
    /// Jobs running, at most `concurrency`, and when each started.
    private var running: [Running] = []
    /// The counters so far.
    public private(set) var counters = Counters()
    /// Seconds a job takes from start to finish, smoothed; nil before the first.
    public private(set) var warmSeconds: Double?
    /// The latest time an event gave.
    private var now: Double = 0

    /// A planner warming `lead` pages ahead of each reader until their pace is
    /// known, then 1 to `maxLead` (at least `lead`), `concurrency` at a time.
    public init(lead: Int = 2, maxLead: Int = 8, maxQueued: Int = 64, readerTTL: Double = 600, maxReaders: Int = 10_000, concurrency: Int = 2) {
        self.lead = min(Self.leadCap, max(0, lead))
        self.maxLead = min(Self.leadCap, max(self.lead, maxLead))
        self.maxQueued = max(1, maxQueued)
        self.readerTTL = readerTTL
        self.maxReaders = max(1, maxReaders)
        self.concurrency = max(1, concurrency)
        readers = LRUCache(capacity: self.maxReaders)
    }

    /// Jobs waiting, and running.
    public var load: (queued: Int, running: Int) { (queued.count, running.count) }

    /// Readers tracked now.
    public var readerCount: Int { readers.count }

    /// Whether `reader` is followed now.
    public func isFollowing(_ reader: ReaderID) -> Bool { readers.contains(reader) }

    /// The lead each reader has now, counted: lead → readers (for the admin view).
    public var leads: [Int: Int] {
        var counts: [Int: Int] = [:]
        for reader in readers.values { counts[reader.lead, default: 0] += 1 }
        return counts
    }

    /// `reader`'s lead and pace (pages a second), when followed.
    public func lead(of reader: ReaderID) -> (lead: Int, pace: Double?)? {
        readers.peek(reader).map { ($0.lead, $0.pace) }
    }

    /// The lead for a reader moving at `pace` pages a second: the pages they
    /// cross in three times a page's warm-up, at least one, at most `maxLead`.
    func lead(forPace pace: Double?) -> Int {
        guard lead > 0 else { return 0 }
        guard let pace, let warmSeconds else { return lead }
        return min(maxLead, max(1, Int((pace * warmSeconds * 3).rounded(.up))))
    }

    /// One page view, as `readersViewed` takes them: see `readerViewed`.
    public struct View {
        public var reader: ReaderID
        public var page: Int
        public var target: Target?
        public var older: Target?
        public var newer: Target?
        public var revision: Int
        public var variants: UInt8
        public var now: Double

        public init(
            _ reader: ReaderID, page: Int, target: Target? = nil, older: Target?, newer: Target?, revision: Int, variants: UInt8 = 1, now: Double
        ) {
            (self.reader, self.page, self.target, self.older, self.newer) = (reader, page, target, older, newer)
            (self.revision, self.variants, self.now) = (revision, variants, now)
        }
    }

    /// Reader `reader` was served `page` of the store at `revision` (asked for
    /// with `target`, when given); `older` and `newer` name the pages beside
    /// it; `variants` are the variants their screen asks for, a bit each. A
    /// revision other than the one planned for means the feed changed:
    /// pages warmed before are stale and are warmed again when wanted. Returns
    /// the running jobs no reader wants any more to cancel, and the jobs to start.
    public mutating func readerViewed(
        _ reader: ReaderID, page: Int, target: Target? = nil, older: Target?, newer: Target?, revision: Int, variants: UInt8 = 1, now: Double
    ) -> [Action] {
        note(View(reader, page: page, target: target, older: older, newer: newer, revision: revision, variants: variants, now: now))
        return nextActions()
    }

    /// Many views at once, in order (pre-warm's drain of its readers' rings):
    /// each moves its reader as `readerViewed` does, and what to start or
    /// cancel is decided once, for where they all are after the last. Jobs
    /// are not started for a page its reader left a moment later in the same
    /// batch, and the queue is looked over once rather than once a view.
    public mutating func readersViewed(_ views: some Sequence<View>) -> [Action] {
        for view in views { note(view) }
        return nextActions()
    }

    /// Moves a view's reader and queues the pages they head for; starts nothing.
    private mutating func note(_ view: View) {
        let (reader, page, target, older, newer) = (view.reader, view.page, view.target, view.older, view.newer)
        let (revision, variants, now) = (view.revision, view.variants, view.now)
        self.now = now
        if revision != self.revision {
            forgetWarmed()
            self.revision = revision
        }
        forgetSilentReaders(now: now)
        let previous = readers.removeValue(for: reader)
        var moved = previous ?? Reader(page: page, direction: 1, seen: now, movedAt: now, pace: nil, lead: 0)
        if let previous {
            if page != previous.page {
                moved.direction = page > previous.page ? 1 : -1
                if abs(page - previous.page) == 1 {
                    // One step: time it (a reader who stays on a page for ages slows their pace).
                    let step = 1 / max(0.1, now - previous.movedAt)
                    moved.pace = previous.pace.map { 0.5 * $0 + 0.5 * step } ?? step
                }
                moved.movedAt = now
            }
        }
        moved.page = page
        moved.seen = now
        moved.variants = variants == 0 ? 1 : variants
        moved.lead = lead(forPace: moved.pace)
        moved.reach = moved.pace.flatMap { pace in warmSeconds.map { Int(pace * $0) } } ?? 0
        // Past `maxReaders`, the reader silent longest makes room.
        for evicted in readers.insert(moved, for: reader, cost: 1) { removeDemand(of: evicted.value) }
        moveDemand(from: previous, to: moved)
        let jumped = previous.map { abs(page - $0.page) > 1 } ?? true
        if jumped, let target {
            // Landed here: the rows below the first screen come next, before any page ahead.
            enqueue(page, target: target)
        } else {
            // Stepped here: it was warmed ahead, or its reader is asking for it now.
            pages[page, default: PageState()].warmed |= moved.variants
        }
        learn(page: page, older: older, newer: newer)
        for step in 1...max(1, moved.lead) { enqueue(page + step * moved.direction) }
        // The page behind, for a reader who turns back: warmed once, not again in a variant
        // added since (a reader who was on it loaded it in what their screen loads).
        if moved.lead > 0 { enqueue(page - moved.direction, unlessWarmed: true) }
        sweepIfLarge()
    }

    /// A job ended; `older` and `newer` name the pages beside it, which are
    /// queued if a reader is still heading their way. Returns the jobs to
    /// start in the place it leaves. A job not running (reported twice, or
    /// already reported cancelled) changes nothing.
    public mutating func finished(_ job: Job, older: Target?, newer: Target?, now: Double? = nil) -> [Action] {
        if let now { self.now = now }
        guard let started = end(job) else { return [] }
        counters.done += 1
        if let now {
            let seconds = max(0, now - started)
            warmSeconds = warmSeconds.map { 0.8 * $0 + 0.2 * seconds } ?? seconds
        }
        pages[job.page, default: PageState()].warmed |= job.variants
        learn(page: job.page, older: older, newer: newer)
        if let older { enqueue(job.page + 1, target: older) }
        if let newer, job.page > 1 { enqueue(job.page - 1, target: newer) }
        sweepIfLarge()
        return nextActions()
    }

    /// A running job stopped before it was done (after a `.cancel`, or at
    /// shutdown). Returns the jobs to start in the place it leaves. A job not
    /// running (already finished) changes nothing.
    public mutating func cancelled(_ job: Job, now: Double? = nil) -> [Action] {
        if let now { self.now = now }
        guard end(job) != nil else { return [] }
        counters.cancelled += 1
        return nextActions()
    }

    /// What to do now: cancel running jobs no reader wants (each once), and
    /// start the queued jobs nearest a reader, as many as `concurrency`
    /// allows, marking them running. Every event above ends with this, so a
    /// caller acting on their results has nothing left to ask for.
    public mutating func nextActions() -> [Action] {
        var actions: [Action] = []
        var kept: [Job] = []
        for job in queued {
            if isWanted(job.page) {
                kept.append(job)
            } else {
                pages[job.page]?.job = .none
                counters.cancelled += 1
            }
        }
        queued = kept
        for index in running.indices.sorted(by: { running[$0].job.page < running[$1].job.page })
        where !running[index].cancelling && !isWanted(running[index].job.page) {
            running[index].cancelling = true
            actions.append(.cancel(running[index].job))
        }
        while running.count < concurrency,
            let nearest = queued.indices.min(by: { (distance(queued[$0].page), queued[$0].page) < (distance(queued[$1].page), queued[$1].page) })
        {
            var best = queued.remove(at: nearest)
            guard let index = pages.index(forKey: best.page) else { continue }
            // In the variants wanted now, less those made already.
            best.variants = pages.values[index].unwarmed
            guard best.variants != 0 else {
                pages.values[index].job = .none
                continue
            }
            pages.values[index].job = .running
            running.append(Running(job: best, startedAt: now))
            actions.append(.start(best))
        }
        return actions
    }

    /// Takes `job` off the running jobs, answering when it started; nil when it was not running.
    private mutating func end(_ job: Job) -> Double? {
        guard let index = running.firstIndex(where: { $0.job == job }) else { return nil }
        pages[job.page]?.job = .none
        return running.remove(at: index).startedAt
    }

    /// Notes how to ask for the pages beside `page`.
    private mutating func learn(page: Int, older: Target?, newer: Target?) {
        if let older { pages[page + 1, default: PageState()].target = older }
        if let newer, page > 1 { pages[page - 1, default: PageState()].target = newer }
    }

    /// The feed changed: pages warmed before are stale, warm them again when
    /// wanted, and ask for them afresh.
    private mutating func forgetWarmed() {
        for index in pages.indices {
            pages.values[index].warmed = 0
            pages.values[index].target = nil
        }
        pages = pages.filter { !$0.value.isIdle }
    }

    /// Queues `page` (asked for with `target`, or as learnt from a page beside
    /// it) when some reader wants it in a variant not warmed yet and no job
    /// holds it: one lookup. With `unlessWarmed`, a page warmed in any variant
    /// is not queued again.
    private mutating func enqueue(_ page: Int, target: Target? = nil, unlessWarmed: Bool = false) {
        guard page >= 1, let index = pages.index(forKey: page) else { return }
        // Read in place: an entry is a few hundred bytes, not to be copied for a few fields.
        guard pages.values[index].job == .none, let target = target ?? pages.values[index].target,
            pages.values[index].unwarmed != 0, !unlessWarmed || pages.values[index].warmed == 0
        else { return }
        if queued.count >= maxQueued {
            // Make room by dropping the farthest job, unless this one is farther still.
            guard let farthest = queued.indices.max(by: { distance(queued[$0].page) < distance(queued[$1].page) }),
                distance(queued[farthest].page) > distance(page)
            else {
                counters.dropped += 1
                return
            }
            pages[queued.remove(at: farthest).page]?.job = .none
            counters.dropped += 1
            pages[page]?.job = .queued
        } else {
            pages.values[index].job = .queued
        }
        queued.append(Job(page: page, target: target))
    }

    /// Once the table holds more than `sweepAt` pages, forgets the pages no
    /// reader wants and no job holds (what was warmed, how to ask for them):
    /// memory stays bounded under readers who roam a deep feed. The next
    /// sweep waits until the table holds twice what this one kept (and at
    /// least `pagesKept`), so a sweep's cost is spread over as many pages
    /// added. A page forgotten and wanted again is warmed again, which finds
    /// its thumbnails made.
    private mutating func sweepIfLarge() {
        guard pages.count > sweepAt else { return }
        pages = pages.filter { !$0.value.demand.isEmpty || $0.value.job != .none }
        sweepAt = max(Self.pagesKept, 2 * pages.count)
    }

    /// Forgets readers silent for longer than `readerTTL`: they sit at the
    /// old end, so this costs one look when none is, one step per reader forgotten.
    private mutating func forgetSilentReaders(now: Double) {
        while let oldest = readers.leastRecent, now - oldest.value.seen > readerTTL {
            readers.removeValue(for: oldest.key)
            removeDemand(of: oldest.value)
        }
    }
}

extension PrewarmPlanner.Job: Sendable where Target: Sendable {}
extension PrewarmPlanner.Action: Sendable where Target: Sendable {}
