/// The thumbnail cache's bookkeeping, as a pure state machine.
///
/// It decides, for each request of a thumbnail, whether it is served from
/// memory, answered with a placeholder because the origin failed recently
/// (negative cache), joins the job already making it (single-flight), or starts
/// a new job; and when a job ends, what to keep, what to evict and whom to
/// answer. It does no I/O and takes no locks and reads no clock: the caller
/// passes `now` (seconds on a monotonic clock), holds it in a `Mutex`, and acts
/// on what it returns outside the lock, in the manner of async-http-client's
/// connection pool.
public struct ThumbnailCacheState<Value, Waiter> {
    /// What to do with a request.
    public enum Decision {
        /// Serve this from memory.
        case hit(Value)
        /// The origin failed for this thumbnail recently: serve the placeholder.
        case failedRecently
        /// A job for it is running; the waiter (if any) is answered when it ends.
        case joined
        /// Nothing is known: start a job now, then call `finish`.
        case start
    }

    /// Counters for the admin view.
    public struct Counters: Sendable, Equatable {
        /// Requests served from memory.
        public var hits = 0
        /// Requests that started a job.
        public var misses = 0
        /// Requests that joined a job already running.
        public var coalesced = 0
        /// Requests answered from the negative cache.
        public var negativeHits = 0
        /// Entries evicted to keep memory inside its budget.
        public var evictions = 0
        /// Jobs that ended in failure (each one negative-cached).
        public var failures = 0
        /// Jobs started by pre-warm rather than by a reader.
        public var prewarmStarts = 0
    }

    private var memory: LRUCache<ThumbnailKey, Value>
    private var flights: [ThumbnailKey: [Waiter]] = [:]
    private var failedUntil: [ThumbnailKey: Double] = [:]
    /// How long a failure is remembered, in seconds.
    public let negativeTTL: Double
    /// The most failures remembered at once.
    public let negativeCapacity: Int
    /// The counters so far.
    public private(set) var counters = Counters()

    /// An empty cache: `memoryBudget` bytes of thumbnails, failures kept `negativeTTL` seconds.
    public init(memoryBudget: Int, negativeTTL: Double = 30, negativeCapacity: Int = 10_000) {
        memory = LRUCache(capacity: memoryBudget)
        self.negativeTTL = negativeTTL
        self.negativeCapacity = negativeCapacity
    }

    /// Decides what to do with a request for `key` at `now`. A `waiter` (a
    /// reader's request) joins a running job; a nil waiter (pre-warm) does not
    /// need an answer.
    ///
    /// Only readers' requests (`fromReader`) count as hits, misses, joins and
    /// negative hits: pre-warm asking for what it warms would otherwise drown
    /// the hit ratio the readers actually get.
    public mutating func request(_ key: ThumbnailKey, now: Double, waiter: Waiter?, fromReader: Bool = true) -> Decision {
        if let value = memory.value(for: key) {
            if fromReader { counters.hits += 1 }
            return .hit(value)
        }
        if let until = failedUntil[key] {
            if until > now {
                if fromReader { counters.negativeHits += 1 }
                return .failedRecently
            }
            failedUntil[key] = nil
        }
        if flights[key] != nil {
            if let waiter { flights[key]!.append(waiter) }
            if fromReader { counters.coalesced += 1 }
            return .joined
        }
        flights[key] = waiter.map { [$0] } ?? []
        if fromReader { counters.misses += 1 } else { counters.prewarmStarts += 1 }
        return .start
    }

    /// Whether `key` is in memory, without counting a hit or touching its recency.
    public func isCached(_ key: ThumbnailKey) -> Bool { memory.contains(key) }

    /// Whether a job for `key` is running.
    public func isInFlight(_ key: ThumbnailKey) -> Bool { flights[key] != nil }

    /// Ends the job for `key` with a value of `cost` bytes: keeps it and returns
    /// the waiters to answer with it.
    public mutating func succeed(_ key: ThumbnailKey, with value: Value, cost: Int) -> [Waiter] {
        failedUntil[key] = nil
        let evicted = memory.insert(value, for: key, cost: cost)
        counters.evictions += evicted.count
        return flights.removeValue(forKey: key) ?? []
    }

    /// Ends the job for `key` in failure: remembers it until `now + negativeTTL`
    /// and returns the waiters to answer with the placeholder.
    public mutating func fail(_ key: ThumbnailKey, now: Double) -> [Waiter] {
        counters.failures += 1
        if failedUntil.count >= negativeCapacity { purgeExpired(now: now) }
        if failedUntil.count >= negativeCapacity, let victim = failedUntil.min(by: { $0.value < $1.value })?.key {
            failedUntil[victim] = nil
        }
        failedUntil[key] = now + negativeTTL
        return flights.removeValue(forKey: key) ?? []
    }

    /// Ends the job for `key` with no result (it was cancelled): the waiters
    /// are returned to be answered some other way, and nothing is remembered.
    public mutating func abandon(_ key: ThumbnailKey) -> [Waiter] {
        flights.removeValue(forKey: key) ?? []
    }

    /// Drops failures whose time is up.
    public mutating func purgeExpired(now: Double) {
        failedUntil = failedUntil.filter { $0.value > now }
    }

    /// Entries and bytes in memory, failures remembered, jobs running.
    public var usage: (entries: Int, bytes: Int, budget: Int, negative: Int, inFlight: Int) {
        (memory.count, memory.totalCost, memory.capacity, failedUntil.count, flights.count)
    }
}
