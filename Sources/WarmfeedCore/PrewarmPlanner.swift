/// Decides which pages to warm ahead of each reader, as a pure state machine.
///
/// When a reader is served page N, the pages they are about to reach, N+1 …
/// N+`lead` in the direction they are moving, are wanted; a job warms one page
/// (renders it, makes its thumbnails) and, when it ends, reveals the page after
/// it, which is queued in turn while still within reach. Jobs nearest a reader
/// run first. When a reader jumps (a fling, a deep link) or turns back, jobs no
/// reader wants any more are dropped from the queue, and running ones are
/// returned to be cancelled, as UIKit's `cancelPrefetching` does on a device.
/// No I/O, no clock, no locks: the caller passes `now` and acts on the result.
public struct PrewarmPlanner<Target: Hashable> {
    /// One page to warm.
    public struct Job: Hashable {
        /// The page number.
        public var page: Int
        /// How to ask the store for it.
        public var target: Target
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

    private struct Reader {
        var page: Int
        var direction: Int
        var seen: Double
    }

    /// Pages warmed ahead of a reader.
    public let lead: Int
    /// The most jobs queued at once.
    public let maxQueued: Int
    /// Seconds after which a silent reader is forgotten.
    public let readerTTL: Double
    /// The most readers tracked at once.
    public let maxReaders: Int

    private var readers: [String: Reader] = [:]
    /// For each page some reader is on or heading for, how many readers are 0,
    /// 1 … `lead` pages from it: the distance of a page is a lookup, not a scan
    /// of every reader.
    private var demand: [Int: [Int]] = [:]
    /// When silent readers were last looked for: at most every few seconds,
    /// not on every page served.
    private var lastSweep = -Double.infinity
    private var queued: [Int: Job] = [:]
    private var running: [Int: Job] = [:]
    private var warmed: Set<Int> = []
    /// How to ask for pages seen beside a page served or warmed, so a reader who
    /// moves on finds the pages ahead already reachable.
    private var known: [Int: Target] = [:]
    private let maxKnown = 4096
    /// The counters so far.
    public private(set) var counters = Counters()

    /// A planner warming `lead` pages ahead of each reader.
    public init(lead: Int = 2, maxQueued: Int = 64, readerTTL: Double = 600, maxReaders: Int = 10_000) {
        self.lead = max(0, lead)
        self.maxQueued = max(1, maxQueued)
        self.readerTTL = readerTTL
        self.maxReaders = max(1, maxReaders)
    }

    /// Jobs waiting, and running.
    public var load: (queued: Int, running: Int) { (queued.count, running.count) }

    /// Readers tracked now.
    public var readerCount: Int { readers.count }

    /// Reader `reader` was served `page`; `older` and `newer` name the pages
    /// beside it. Returns running jobs that no reader wants any more: cancel them
    /// and report each with `cancelled`.
    public mutating func readerViewed(_ reader: String, page: Int, older: Target?, newer: Target?, now: Double) -> [Job] {
        forgetSilentReaders(now: now)
        let previous = readers[reader]
        var direction = previous?.direction ?? 1
        if let previous, page != previous.page { direction = page > previous.page ? 1 : -1 }
        if let previous { removeDemand(of: previous) }
        if previous == nil, readers.count >= maxReaders, let oldest = readers.min(by: { $0.value.seen < $1.value.seen }) {
            removeDemand(of: oldest.value)
            readers[oldest.key] = nil
        }
        let moved = Reader(page: page, direction: direction, seen: now)
        readers[reader] = moved
        addDemand(of: moved)
        warmed.insert(page)  // the reader has it: rendering it was the warming
        learn(page: page, older: older, newer: newer)
        for step in 1...max(1, lead) {
            let ahead = page + step * direction
            if let target = known[ahead] { enqueue(Job(page: ahead, target: target)) }
        }
        return dropUnwanted()
    }

    /// The queued job nearest a reader, now marked running; nil when none.
    public mutating func nextJob() -> Job? {
        guard let best = queued.values.min(by: { (distance($0.page), $0.page) < (distance($1.page), $1.page) }) else { return nil }
        queued[best.page] = nil
        running[best.page] = best
        return best
    }

    /// A job ended; `older` and `newer` name the pages beside it, which are
    /// queued if a reader is still heading their way.
    public mutating func finished(_ job: Job, older: Target?, newer: Target?) {
        guard running.removeValue(forKey: job.page) != nil else { return }
        counters.done += 1
        warmed.insert(job.page)
        learn(page: job.page, older: older, newer: newer)
        if let older { enqueue(Job(page: job.page + 1, target: older)) }
        if let newer, job.page > 1 { enqueue(Job(page: job.page - 1, target: newer)) }
    }

    private mutating func learn(page: Int, older: Target?, newer: Target?) {
        if known.count >= maxKnown { known.removeAll(keepingCapacity: true) }
        if let older { known[page + 1] = older }
        if let newer, page > 1 { known[page - 1] = newer }
    }

    /// A running job was cancelled (after `readerViewed` asked for it).
    public mutating func cancelled(_ job: Job) {
        if running.removeValue(forKey: job.page) != nil { counters.cancelled += 1 }
    }

    /// The feed changed: pages warmed before are stale, warm them again when wanted.
    public mutating func forgetWarmed() {
        warmed.removeAll()
        known.removeAll()
    }

    /// Whether some reader is on `page` or heading for it within `lead` pages.
    /// The page a reader has just reached stays wanted: its thumbnails are being
    /// asked for right now, and a job still warming it must not be cancelled.
    public func isWanted(_ page: Int) -> Bool {
        distance(page) != Int.max
    }

    /// How many pages the nearest reader heading for `page` is from it; Int.max when none is.
    private func distance(_ page: Int) -> Int {
        demand[page]?.firstIndex { $0 > 0 } ?? Int.max
    }

    private mutating func addDemand(of reader: Reader) {
        for ahead in 0...lead {
            demand[reader.page + ahead * reader.direction, default: Array(repeating: 0, count: lead + 1)][ahead] += 1
        }
    }

    private mutating func removeDemand(of reader: Reader) {
        for ahead in 0...lead {
            let page = reader.page + ahead * reader.direction
            guard var counts = demand[page] else { continue }
            counts[ahead] -= 1
            demand[page] = counts.allSatisfy { $0 == 0 } ? nil : counts
        }
    }

    private mutating func enqueue(_ job: Job) {
        guard job.page >= 1, isWanted(job.page), !warmed.contains(job.page),
              queued[job.page] == nil, running[job.page] == nil
        else { return }
        if queued.count >= maxQueued {
            // Make room by dropping the farthest job, unless this one is farther still.
            guard let farthest = queued.values.max(by: { distance($0.page) < distance($1.page) }),
                  distance(farthest.page) > distance(job.page)
            else {
                counters.dropped += 1
                return
            }
            queued[farthest.page] = nil
            counters.dropped += 1
        }
        queued[job.page] = job
    }

    private mutating func dropUnwanted() -> [Job] {
        for page in queued.keys where !isWanted(page) {
            queued[page] = nil
            counters.cancelled += 1
        }
        return running.values.filter { !isWanted($0.page) }.sorted { $0.page < $1.page }
    }

    private mutating func forgetSilentReaders(now: Double) {
        guard now - lastSweep >= min(5, readerTTL / 2) else { return }
        lastSweep = now
        for (key, reader) in readers where now - reader.seen > readerTTL {
            removeDemand(of: reader)
            readers[key] = nil
        }
    }
}

extension PrewarmPlanner.Job: Sendable where Target: Sendable {}
