/// A least-recently-used map bounded by a total cost (bytes, usually).
///
/// A pure value with no locks and no clock: callers wrap it in a `Mutex` and
/// decide what to do with what it evicts. Lookups, inserts and evictions are
/// O(1): entries sit in slots whose order is a `RecencyList`, so reordering on a
/// hit (every cached request) touches two integers and never copies an entry.
public struct LRUCache<Key: Hashable, Value> {
    @usableFromInline struct Entry {
        @usableFromInline var key: Key
        @usableFromInline var value: Value
        @usableFromInline var cost: Int

        @inlinable init(key: Key, value: Value, cost: Int) {
            self.key = key
            self.value = value
            self.cost = cost
        }
    }

    /// The most total cost kept.
    public let capacity: Int
    /// The total cost of what is kept now.
    @inlinable public var totalCost: Int { keptCost }
    @usableFromInline var keptCost = 0
    @usableFromInline var slots: [Entry?] = []
    @usableFromInline var order = RecencyList<Int>()
    @usableFromInline var free: [Int] = []
    @usableFromInline var index: [Key: Int] = [:]

    /// An empty cache holding at most `capacity` in total cost.
    @inlinable public init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// How many entries are kept.
    @inlinable public var count: Int { index.count }

    /// The value for `key`, which becomes the most recently used.
    @inlinable public mutating func value(for key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        order.moveToNewest(slot)
        return slots[slot]?.value
    }

    /// Whether `key` is kept, without touching its recency.
    @inlinable public func contains(_ key: Key) -> Bool { index[key] != nil }

    /// The value for `key`, without touching its recency.
    @inlinable public func peek(_ key: Key) -> Value? { index[key].flatMap { slots[$0]?.value } }

    /// Every value, in no particular order, without touching recency.
    @inlinable public var values: some Sequence<Value> { slots.lazy.compactMap { $0?.value } }

    /// Keeps `value` for `key` (replacing any old value), then evicts the least
    /// recently used entries until the total fits. An entry costlier than the
    /// whole capacity is not kept. Returns what was evicted, oldest first.
    @inlinable @discardableResult
    public mutating func insert(_ value: Value, for key: Key, cost: Int) -> [(key: Key, value: Value)] {
        removeValue(for: key)
        guard cost <= capacity else { return [] }
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
            slots[slot] = Entry(key: key, value: value, cost: cost)
        } else {
            slot = order.addSlot()
            slots.append(Entry(key: key, value: value, cost: cost))
        }
        order.linkAsNewest(slot)
        index[key] = slot
        keptCost += cost
        var evicted: [(key: Key, value: Value)] = []
        while totalCost > capacity, let oldest = order.oldest, let victim = slots[oldest] {
            removeValue(for: victim.key)
            evicted.append((victim.key, victim.value))
        }
        return evicted
    }

    /// Forgets `key`; returns its value if it was kept.
    @inlinable @discardableResult
    public mutating func removeValue(for key: Key) -> Value? {
        removeEntry(for: key)?.value
    }

    /// Forgets `key`; returns its value and cost if it was kept.
    @inlinable @discardableResult
    public mutating func removeEntry(for key: Key) -> (value: Value, cost: Int)? {
        guard let slot = index.removeValue(forKey: key), let entry = slots[slot] else { return nil }
        order.unlink(slot)
        slots[slot] = nil
        free.append(slot)
        keptCost -= entry.cost
        return (entry.value, entry.cost)
    }

    /// Forgets the least recently used entry and returns it; nil when empty.
    @inlinable public mutating func removeLeastRecent() -> (key: Key, value: Value, cost: Int)? {
        guard let oldest = order.oldest, let key = slots[oldest]?.key, let entry = removeEntry(for: key) else { return nil }
        return (key, entry.value, entry.cost)
    }

    /// Forgets everything.
    @inlinable public mutating func removeAll() {
        self = LRUCache(capacity: capacity)
    }

    /// The least recently used entry, without touching its recency; nil when empty.
    @inlinable public var leastRecent: (key: Key, value: Value)? {
        guard let oldest = order.oldest, let entry = slots[oldest] else { return nil }
        return (entry.key, entry.value)
    }

    /// Keys from most to least recently used (for tests and the admin view).
    @inlinable public var keysByRecency: [Key] {
        order.byRecency.compactMap { slots[$0]?.key }
    }
}

extension LRUCache: Sendable where Key: Sendable, Value: Sendable {}

extension LRUCache.Entry: Sendable where Key: Sendable, Value: Sendable {}
