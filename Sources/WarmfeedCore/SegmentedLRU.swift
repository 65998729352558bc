/// A cache bounded by total cost that a one-pass scan cannot flush: the
/// segmented LRU of Caffeine's main space (and of memcached, and of the
/// original SLRU of Karedla, Love and Wherry, 1994).
///
/// A new entry goes on probation. A hit there promotes it to the protected
/// segment, which may hold up to `protectedShare` of the capacity; when it is
/// over, its least recent entries go back to the head of probation. Room is
/// always made at the tail of probation first. So a crawler that walks every
/// page once only ever displaces other once-seen pages, and the pages readers
/// come back to stay.
///
/// A crawler fast enough to push a reader's page off probation before the
/// reader's second visit would keep it from ever being promoted; so, as 2Q
/// does (Johnson and Shasha, 1994), the keys lately pushed off probation are
/// remembered (keys only, up to `ghostKeys`), and one of them inserted again
/// goes straight to the protected segment. Every operation is O(1), as in
/// `LRUCache`, which holds each segment.
///
/// A pure value with no locks: callers wrap it in a `Mutex` and let evicted
/// values go outside it.
public struct SegmentedLRU<Key: Hashable, Value> {
    /// The most total cost kept.
    public let capacity: Int
    /// The most the protected segment holds.
    public let protectedCapacity: Int
    // The segments never evict on their own (their own bound is unreachable):
    // the total is kept here, so every eviction is returned to the caller.
    @usableFromInline var probation: LRUCache<Key, Value>
    @usableFromInline var protected: LRUCache<Key, Value>
    /// Keys lately evicted from probation, each at cost 1.
    @usableFromInline var ghosts: LRUCache<Key, Void>

    /// An empty cache of `capacity`, `protectedShare` of it for entries seen twice (Caffeine: 80%).
    @inlinable public init(capacity: Int, protectedShare: Double = 0.8, ghostKeys: Int = 4096) {
        self.capacity = max(0, capacity)
        protectedCapacity = Int(Double(self.capacity) * min(1, max(0, protectedShare)))
        ghosts = LRUCache(capacity: ghostKeys)
        probation = LRUCache(capacity: .max)
        protected = LRUCache(capacity: .max)
    }

    /// How many entries are kept.
    @inlinable public var count: Int { probation.count + protected.count }

    /// The total cost of what is kept now.
    @inlinable public var totalCost: Int { probation.totalCost + protected.totalCost }

    /// The cost of the entries seen more than once.
    @inlinable public var protectedCost: Int { protected.totalCost }

    /// Whether `key` is kept, without touching its recency.
    @inlinable public func contains(_ key: Key) -> Bool { protected.contains(key) || probation.contains(key) }

    /// The value for `key`. A hit on probation promotes the entry; a hit on
    /// the protected segment makes it its most recent.
    @inlinable public mutating func value(for key: Key) -> Value? {
        if let value = protected.value(for: key) { return value }
        guard let (value, cost) = probation.removeEntry(for: key) else { return nil }
        protect(value, for: key, cost: cost)
        return value
    }

    @inlinable mutating func protect(_ value: Value, for key: Key, cost: Int) {
        protected.insert(value, for: key, cost: cost)
        while protected.totalCost > protectedCapacity, let demoted = protected.removeLeastRecent() {
            probation.insert(demoted.value, for: demoted.key, cost: demoted.cost)
        }
    }

    /// Keeps `value` for `key` on probation (or in the protected segment, when
    /// it replaces a protected entry, as a page's gzipped form does, or when the
    /// key was lately pushed off probation), replacing any old value; then
    /// makes room from the tail of probation, and from the protected tail only
    /// when probation is empty. An entry costlier than the whole capacity is
    /// not kept. Returns what was evicted, least recent first.
    @inlinable @discardableResult
    public mutating func insert(_ value: Value, for key: Key, cost: Int) -> [(key: Key, value: Value)] {
        let wasProtected = protected.removeValue(for: key) != nil
        probation.removeValue(for: key)
        guard cost <= capacity else { return [] }
        if wasProtected || ghosts.removeValue(for: key) != nil {
            protect(value, for: key, cost: cost)
        } else {
            probation.insert(value, for: key, cost: cost)
        }
        var evicted: [(key: Key, value: Value)] = []
        while totalCost > capacity {
            if let victim = probation.removeLeastRecent() {
                ghosts.insert((), for: victim.key, cost: 1)
                evicted.append((victim.key, victim.value))
            } else if let victim = protected.removeLeastRecent() {
                evicted.append((victim.key, victim.value))
            } else {
                break
            }
        }
        return evicted
    }

    /// Forgets `key`; returns its value if it was kept.
    @inlinable @discardableResult
    public mutating func removeValue(for key: Key) -> Value? {
        protected.removeValue(for: key) ?? probation.removeValue(for: key)
    }
}

extension SegmentedLRU: Sendable where Key: Sendable, Value: Sendable {}
