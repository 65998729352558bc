import DequeModule
import Synchronization
import ThreadSlots

/// A cache bounded by total cost that any number of threads read without a
/// lock, and that a one-pass scan cannot flush.
///
/// Keys are spread over stripes by their hash. A stripe's entries are an
/// immutable table published through one atomic reference: a read loads it
/// (announcing its epoch, `ReadEpochs`), looks the key up and sets the
/// entry's reference bit, and nothing else; no read writes to memory another
/// thread writes, but for that one bit, once. A write (an insert, and the
/// evictions it causes) takes its stripe's lock, publishes a new table, and
/// retires the old one until no reader can still hold it.
///
/// Recency is CLOCK's, not a list's: a hit sets the entry's bit; the writer,
/// making room, promotes a probation entry whose bit is set to the protected
/// segment (`protectedShare` of the stripe) instead of evicting it, demotes
/// the oldest protected entries back to probation when that segment is over,
/// clearing their bits, and evicts from probation. So, as in a segmented LRU
/// (Caffeine's main space), a crawler that walks every page once only
/// displaces other once-seen pages; and keys lately evicted from probation are
/// remembered (2Q's ghosts), so one that comes back goes straight to the
/// protected segment. Each stripe holds `capacity / stripes`.
public final class StripedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// One kept value.
    final class Entry: Sendable {
        let key: Key
        let value: Value
        let cost: Int
        /// Set by a hit, cleared by the writer when it promotes or demotes.
        let referenced = Atomic<Bool>(false)
        /// Which segment the writer keeps it in (touched under the stripe's lock only).
        nonisolated(unsafe) var isProtected = false

        init(key: Key, value: Value, cost: Int) {
            self.key = key
            self.value = value
            self.cost = cost
        }

        /// A hit: sets the bit, writing only when it is not set already.
        @inline(__always)
        func touch() {
            if !referenced.load(ordering: .relaxed) { referenced.store(true, ordering: .relaxed) }
        }
    }

    /// A stripe's entries as readers see them; never changed once published.
    final class Table: Sendable {
        let entries: [Key: Entry]
        init(_ entries: [Key: Entry]) { self.entries = entries }
    }

    /// What a stripe's writer keeps, under its lock.
    struct Segments {
        var probation = Deque<Entry>()
        var protected = Deque<Entry>()
        var probationCost = 0
        var protectedCost = 0
        var ghosts = Deque<Key>()
        var ghostSet = Set<Key>()
        /// Tables replaced and not yet released, with the epoch they were retired in.
        var retired: [(table: Unmanaged<Table>, epoch: UInt64)] = []
    }

    final class Stripe: Sendable {
        let table: Atomic<Unmanaged<Table>>
        let writer = Mutex(Segments())

        init() {
            table = Atomic(Unmanaged.passRetained(Table([:])))
        }

        deinit {
            table.load(ordering: .relaxed).release()
            writer.withLock { segments in for old in segments.retired { old.table.release() } }
        }
    }

    /// The most total cost kept.
    public let capacity: Int
    /// The most each stripe keeps: a value costing more is never kept whole.
    public let stripeCapacity: Int
    /// The most of a stripe its protected segment holds.
    let protectedCapacity: Int
    let ghostKeys: Int
    private let stripes: [Stripe]
    private let mask: Int
    private let epochs: ReadEpochs

    /// A cache of `capacity` in `stripes` stripes (rounded up to a power of
    /// two; by default one per 512 KiB of capacity, at least 1, at most 256:
    /// a stripe holds a few dozen pages, enough that the hash's unevenness
    /// costs little of the budget, few enough that a write copies little, and
    /// 8 threads writing at once rarely meet on one), readers announcing
    /// themselves in `epochs`.
    public init(capacity: Int, stripes: Int? = nil, protectedShare: Double = 0.8, ghostKeys: Int = 4096, epochs: ReadEpochs = ReadEpochs()) {
        self.capacity = max(0, capacity)
        var count = 1
        let wanted = min(256, max(1, stripes ?? self.capacity / (512 << 10)))
        while count < wanted { count <<= 1 }
        self.stripes = (0..<count).map { _ in Stripe() }
        mask = count - 1
        stripeCapacity = self.capacity / count
        protectedCapacity = Int(Double(stripeCapacity) * min(1, max(0, protectedShare)))
        self.ghostKeys = max(1, ghostKeys / count)
        self.epochs = epochs
    }

    private func stripe(for key: Key) -> Stripe {
        stripes[key.hashValue & mask]
    }

    /// The value kept for `key`, marked as used; nil when none is.
    public func value(for key: Key) -> Value? {
        let stripe = stripe(for: key)
        let entry =
            epochs.read { stripe.table.load(ordering: .acquiring)._withUnsafeGuaranteedRef { $0.entries[key] } }
            // A thread with no slot of its own reads under the writers' lock, where no table is retired.
            ?? stripe.writer.withLock { _ in stripe.table.load(ordering: .acquiring)._withUnsafeGuaranteedRef { $0.entries[key] } }
        guard let entry else { return nil }
        entry.touch()
        return entry.value
    }

    /// Whether `key` is kept, without marking it.
    public func contains(_ key: Key) -> Bool {
        let stripe = stripe(for: key)
        return stripe.writer.withLock { _ in stripe.table.load(ordering: .acquiring)._withUnsafeGuaranteedRef { $0.entries[key] != nil } }
    }

    /// Keeps `value` for `key` at `cost`, replacing what was kept for it, and
    /// makes room; returns the values that left (to be let go outside any lock).
    @discardableResult
    public func insert(_ value: Value, for key: Key, cost: Int) -> [Value] {
        insert(value, for: key, cost: cost, refusedOver: nil)!
    }

    /// `insert`, unless `key` is new to its stripe, the stripe must evict
    /// to take it, and `refuses` the entry it would evict first (its oldest
    /// probation entry not used since it came): TinyLFU's admission, where a
    /// new value must be asked for more often than its victim. nil when
    /// refused: nothing changed, not even a table copied.
    public func insert(_ value: Value, for key: Key, cost: Int, unlessOver refuses: (_ victim: Key) -> Bool) -> [Value]? {
        withoutActuallyEscaping(refuses) { insert(value, for: key, cost: cost, refusedOver: $0) }
    }

    private func insert(_ value: Value, for key: Key, cost: Int, refusedOver refuses: ((Key) -> Bool)?) -> [Value]? {
        let stripe = stripe(for: key)
        let done = stripe.writer.withLock { segments -> (evicted: [Value], released: [Unmanaged<Table>])? in
            let old = stripe.table.load(ordering: .acquiring)
            if let refuses, segments.probationCost + segments.protectedCost + cost > stripeCapacity {
                let kept = old.takeUnretainedValue().entries
                if kept[key] == nil, !segments.ghostSet.contains(key),
                    let victim = segments.probation.first(where: { kept[$0.key] === $0 && !$0.referenced.load(ordering: .relaxed) }),
                    refuses(victim.key)
                {
                    return nil
                }
            }
            var entries = old.takeUnretainedValue().entries
            let entry = Entry(key: key, value: value, cost: cost)
            var evicted: [Value] = []
            if let replaced = entries.updateValue(entry, forKey: key) {
                // Its place in the segments is taken by the new entry, in the same segment.
                entry.isProtected = replaced.isProtected
                if replaced.isProtected { segments.protectedCost -= replaced.cost } else { segments.probationCost -= replaced.cost }
                if replaced.referenced.load(ordering: .relaxed) { entry.referenced.store(true, ordering: .relaxed) }
            } else if segments.ghostSet.remove(key) != nil {
                entry.isProtected = true
            }
            if entry.isProtected {
                segments.protected.append(entry)
                segments.protectedCost += cost
            } else {
                segments.probation.append(entry)
                segments.probationCost += cost
            }
            makeRoom(&segments, &entries, evicted: &evicted)
            // Published before the old one is retired, and seen to be before the
            // epochs are read (a full fence: the store must not wait in this
            // core's buffer while a reader announces itself and loads the old one).
            stripe.table.store(Unmanaged.passRetained(Table(entries)), ordering: .sequentiallyConsistent)
            atomicMemoryFence(ordering: .sequentiallyConsistent)
            segments.retired.append((old, epochs.current))
            return (evicted, releasable(&segments))
        }
        guard let done else { return nil }
        for table in done.released { table.release() }
        return done.evicted
    }

    /// Lets go of the replaced tables no reader can hold any more, in every
    /// stripe. A stripe releases its own at its next write; one not written
    /// for a while would keep its last replaced table, and the values only it
    /// still held, until then; so whoever keeps the cache calls this now and
    /// then (every few seconds).
    public func reclaim() {
        for stripe in stripes {
            let released = stripe.writer.withLock { releasable(&$0) }
            for table in released { table.release() }
        }
    }

    /// Evicts (from probation, giving referenced entries a second chance in the
    /// protected segment) until the stripe is within its capacity.
    private func makeRoom(_ segments: inout Segments, _ entries: inout [Key: Entry], evicted: inout [Value]) {
        func isCurrent(_ entry: Entry) -> Bool { entries[entry.key] === entry }
        while segments.probationCost + segments.protectedCost > stripeCapacity {
            // The protected segment within its share: its oldest go back to probation, bits cleared.
            while segments.protectedCost > protectedCapacity, let oldest = segments.protected.popFirst() {
                guard isCurrent(oldest), oldest.isProtected else { continue }
                segments.protectedCost -= oldest.cost
                oldest.isProtected = false
                oldest.referenced.store(false, ordering: .relaxed)
                segments.probation.append(oldest)
                segments.probationCost += oldest.cost
            }
            guard let candidate = segments.probation.popFirst() ?? segments.protected.popFirst() else { break }
            guard isCurrent(candidate) else { continue }
            if candidate.referenced.load(ordering: .relaxed), !candidate.isProtected {
                // Seen again since it came: promoted, not evicted.
                candidate.referenced.store(false, ordering: .relaxed)
                candidate.isProtected = true
                segments.probationCost -= candidate.cost
                segments.protected.append(candidate)
                segments.protectedCost += candidate.cost
                continue
            }
            if candidate.isProtected {
                segments.protectedCost -= candidate.cost
            } else {
                segments.probationCost -= candidate.cost
                remember(candidate.key, in: &segments)
            }
            entries[candidate.key] = nil
            evicted.append(candidate.value)
        }
        // Stale places (replaced entries) are dropped when they come to the front, and at most as many as live ones are kept.
        if segments.probation.count > 2 * max(1, entries.count) { segments.probation = Deque(segments.probation.filter(isCurrent)) }
        if segments.protected.count > 2 * max(1, entries.count) { segments.protected = Deque(segments.protected.filter(isCurrent)) }
    }

    private func remember(_ key: Key, in segments: inout Segments) {
        guard segments.ghostSet.insert(key).inserted else { return }
        segments.ghosts.append(key)
        while segments.ghosts.count > ghostKeys, let oldest = segments.ghosts.popFirst() { segments.ghostSet.remove(oldest) }
    }

    /// Takes from `segments` the retired tables no reader can hold any more.
    private func releasable(_ segments: inout Segments) -> [Unmanaged<Table>] {
        guard !segments.retired.isEmpty else { return [] }
        let bound = epochs.advance()
        var released: [Unmanaged<Table>] = []
        segments.retired.removeAll { old in
            guard old.epoch <= bound else { return false }
            released.append(old.table)
            return true
        }
        return released
    }

    /// Entries and total cost kept now (each stripe read under its lock).
    public var usage: (count: Int, cost: Int) {
        var count = 0
        var cost = 0
        for stripe in stripes {
            stripe.writer.withLock { segments in
                count += stripe.table.load(ordering: .acquiring)._withUnsafeGuaranteedRef { $0.entries.count }
                cost += segments.probationCost + segments.protectedCost
            }
        }
        return (count, cost)
    }
}
