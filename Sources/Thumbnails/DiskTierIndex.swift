import ImageFormats
import WarmfeedCore

/// The disk tier's index: which thumbnails are on disk, each one's size and
/// its recency, in at most 40–43 bytes a thumbnail and within a memory budget of
/// its own, as nginx's `keys_zone=name:size` bounds the keys of its proxy cache.
///
/// A pure value with no locks and no I/O: the tier wraps it in a `Mutex` and
/// unlinks the files of the keys it evicts. Keys are packed into 8 bytes
/// (`ThumbnailKey.packed`), sizes into 4, the recency list (a `RecencyList`,
/// as `LRUCache`'s) into two 4-byte links, with no optional slots: a removed entry's slot is filled with the
/// last one, so the arrays never hold a hole. The arrays and the table grow by
/// doubling, never past `maxEntries`, and the entry count is chosen so that
/// even at that size they fit the budget. Past `maxEntries` the least recently
/// used thumbnail makes room, as it does past the disk budget.
struct DiskTierIndex {
    /// The most bytes of thumbnails on disk.
    let diskBudget: Int
    /// The bytes of memory the index may hold.
    let memoryBudget: Int
    /// The most thumbnails indexed, the most the memory budget holds.
    let maxEntries: Int
    /// The bytes of thumbnails on disk now.
    private(set) var diskBytes = 0

    private var slotOf: [UInt64: Int32] = [:]
    private var keys: [UInt64] = []
    private var sizes: [UInt32] = []
    private var order = RecencyList<Int32>()

    /// The bytes one entry costs in the arrays: key, size and two links.
    static let arrayBytesPerEntry = 8 + 4 + 4 + 4
    /// The bytes one bucket of the table costs: a key, a slot and a bit of its bitmap.
    static let bucketBytes = 8.0 + 4.0 + 1.0 / 8.0

    /// An empty index for `diskBudget` bytes on disk, holding as many entries
    /// as `memoryBudget` bytes of memory allow at their largest.
    init(diskBudget: Int, memoryBudget: Int) {
        self.diskBudget = max(0, diskBudget)
        self.memoryBudget = max(0, memoryBudget)
        self.maxEntries = Self.entries(within: self.memoryBudget)
    }

    /// How many thumbnails are indexed.
    var count: Int { keys.count }

    /// The bytes of memory the index holds now (the capacity of its table and
    /// arrays, not only what is filled).
    var memoryBytes: Int {
        Self.tableBytes(capacity: slotOf.capacity)
            + keys.capacity * 8 + sizes.capacity * 4 + order.memoryBytes
    }

    /// Whether `key` is indexed; if so it becomes the most recently used.
    mutating func touch(_ key: UInt64) -> Bool {
        guard let slot = slotOf[key] else { return false }
        order.moveToNewest(Int(slot))
        return true
    }

    /// Whether `key` is indexed, without touching its recency.
    func contains(_ key: UInt64) -> Bool { slotOf[key] != nil }

    /// Indexes `key` with `size` bytes on disk (replacing an older entry for it)
    /// as the most recently used, then evicts the least recently used past the
    /// disk budget or the entry count. Returns the keys evicted, oldest first,
    /// never `key` itself unless it alone is larger than the disk budget (or
    /// the memory budget holds no entry at all).
    mutating func insert(_ key: UInt64, size: Int) -> [UInt64] {
        remove(key)
        guard size <= diskBudget, maxEntries > 0, size <= Int(UInt32.max) else { return [key] }
        var evicted: [UInt64] = []
        // Room is made before the append, so the arrays never grow past `maxEntries`.
        while keys.count >= maxEntries || diskBytes + size > diskBudget, let oldest = order.oldest {
            let victim = keys[oldest]
            remove(victim)
            evicted.append(victim)
        }
        grow()
        let slot = order.addSlot()
        keys.append(key)
        sizes.append(UInt32(size))
        slotOf[key] = Int32(slot)
        order.linkAsNewest(slot)
        diskBytes += size
        return evicted
    }

    /// Forgets `key`; returns whether it was indexed.
    @discardableResult
    mutating func remove(_ key: UInt64) -> Bool {
        guard let slot = slotOf.removeValue(forKey: key).map(Int.init) else { return false }
        order.unlink(slot)
        diskBytes -= Int(sizes[slot])
        let last = keys.count - 1
        if slot != last {
            // The last entry moves into the hole, and its place in the order follows.
            let moved = keys[last]
            keys[slot] = moved
            sizes[slot] = sizes[last]
            slotOf[moved] = Int32(slot)
        }
        order.removeLastSlot(into: slot)
        keys.removeLast()
        sizes.removeLast()
        return true
    }

    /// Keys from most to least recently used (for tests).
    var keysByRecency: [UInt64] { order.byRecency.map { keys[$0] } }

    /// Doubles the table and the arrays when they are full, never past `maxEntries`.
    private mutating func grow() {
        guard keys.count == keys.capacity || slotOf.count == slotOf.capacity else { return }
        let wanted = min(maxEntries, max(64, keys.count * 2))
        if slotOf.count == slotOf.capacity { slotOf.reserveCapacity(wanted) }
        if keys.count == keys.capacity {
            keys.reserveCapacity(wanted)
            sizes.reserveCapacity(wanted)
            order.reserveCapacity(wanted)
        }
    }

    /// The bytes of a Swift dictionary table able to hold `capacity` entries:
    /// a power-of-two bucket count filled at most three quarters.
    static func tableBytes(capacity: Int) -> Int {
        guard capacity > 0 else { return 0 }
        var buckets = 1
        while buckets * 3 / 4 < capacity { buckets *= 2 }
        return Int((Double(buckets) * bucketBytes).rounded(.up))
    }

    /// The most entries whose table and arrays, at their largest, fit `budget` bytes.
    static func entries(within budget: Int) -> Int {
        var low = 0
        var high = budget / arrayBytesPerEntry
        while low < high {
            let middle = (low + high + 1) / 2
            if tableBytes(capacity: middle) + middle * arrayBytesPerEntry <= budget { low = middle } else { high = middle - 1 }
        }
        return low
    }
}

extension ThumbnailKey {
    /// The key in 8 bytes: the item id above 3 bits of variant (the density
    /// and the format); nil for an id outside 0..<2⁶⁰ or a variant that does
    /// not fit, which the disk tier then does not keep.
    var packed: UInt64? {
        guard itemID >= 0, itemID < 1 << 60, (1...2).contains(variant.scale) else { return nil }
        let format: UInt64 =
            switch variant.format {
            case .webp: 0
            case .jpeg: 1
            case .avif: 2
            }
        return UInt64(itemID) << 3 | UInt64(variant.scale - 1) << 2 | format
    }

    /// The key `packed` made.
    init?(packed: UInt64) {
        let format: ImageFormat
        switch packed & 3 {
        case 0: format = .webp
        case 1: format = .jpeg
        case 2: format = .avif
        default: return nil
        }
        self.init(itemID: Int64(packed >> 3), variant: ThumbnailVariant(scale: Int(packed >> 2 & 1) + 1, format: format))
    }
}
