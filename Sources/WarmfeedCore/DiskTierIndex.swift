import ImageFormats

/// The disk tier's index: which thumbnails are on disk, each one's size and
/// its recency, in at most 40–43 bytes a thumbnail and within a memory budget of
/// its own, as nginx's `keys_zone=name:size` bounds the keys of its proxy cache.
///
/// A pure value with no locks and no I/O: the tier wraps it in a `Mutex` and
/// unlinks the files of the keys it evicts. Keys are packed into 8 bytes
/// (`ThumbnailKey.packed`), sizes into 4, the recency list into two 4-byte
/// links, with no optional slots: a removed entry's slot is filled with the
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
    private var newer: [Int32] = []
    private var older: [Int32] = []
    private var newest: Int32 = -1
    private var oldest: Int32 = -1

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
            + keys.capacity * 8 + sizes.capacity * 4 + newer.capacity * 4 + older.capacity * 4
    }

    /// Whether `key` is indexed; if so it becomes the most recently used.
    mutating func touch(_ key: UInt64) -> Bool {
        guard let slot = slotOf[key] else { return false }
        if slot != newest {
            unlink(slot)
            link(slot)
        }
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
        while keys.count >= maxEntries || diskBytes + size > diskBudget, oldest != -1 {
            let victim = keys[Int(oldest)]
            remove(victim)
            evicted.append(victim)
        }
        grow()
        let slot = Int32(keys.count)
        keys.append(key)
        sizes.append(UInt32(size))
        newer.append(-1)
        older.append(-1)
        slotOf[key] = slot
        link(slot)
        diskBytes += size
        return evicted
    }

    /// Forgets `key`; returns whether it was indexed.
    @discardableResult
    mutating func remove(_ key: UInt64) -> Bool {
        guard let slot = slotOf.removeValue(forKey: key) else { return false }
        unlink(slot)
        diskBytes -= Int(sizes[Int(slot)])
        let last = Int32(keys.count - 1)
        if slot != last {
            // The last entry moves into the hole, and everything that pointed at it follows.
            let moved = keys[Int(last)]
            let (newerSlot, olderSlot) = (newer[Int(last)], older[Int(last)])
            keys[Int(slot)] = moved
            sizes[Int(slot)] = sizes[Int(last)]
            newer[Int(slot)] = newerSlot
            older[Int(slot)] = olderSlot
            if newerSlot != -1 { older[Int(newerSlot)] = slot } else { newest = slot }
            if olderSlot != -1 { newer[Int(olderSlot)] = slot } else { oldest = slot }
            slotOf[moved] = slot
        }
        keys.removeLast()
        sizes.removeLast()
        newer.removeLast()
        older.removeLast()
        return true
    }

    /// Keys from most to least recently used (for tests).
    var keysByRecency: [UInt64] {
        var result: [UInt64] = []
        var slot = newest
        while slot != -1 {
            result.append(keys[Int(slot)])
            slot = older[Int(slot)]
        }
        return result
    }

    /// Doubles the table and the arrays when they are full, never past `maxEntries`.
    private mutating func grow() {
        guard keys.count == keys.capacity || slotOf.count == slotOf.capacity else { return }
        let wanted = min(maxEntries, max(64, keys.count * 2))
        if slotOf.count == slotOf.capacity { slotOf.reserveCapacity(wanted) }
        if keys.count == keys.capacity {
            keys.reserveCapacity(wanted)
            sizes.reserveCapacity(wanted)
            newer.reserveCapacity(wanted)
            older.reserveCapacity(wanted)
        }
    }

    private mutating func link(_ slot: Int32) {
        older[Int(slot)] = newest
        newer[Int(slot)] = -1
        if newest != -1 { newer[Int(newest)] = slot }
        newest = slot
        if oldest == -1 { oldest = slot }
    }

    private mutating func unlink(_ slot: Int32) {
        let (newerSlot, olderSlot) = (newer[Int(slot)], older[Int(slot)])
        if newerSlot != -1 { older[Int(newerSlot)] = olderSlot } else { newest = olderSlot }
        if olderSlot != -1 { newer[Int(olderSlot)] = newerSlot } else { oldest = newerSlot }
        newer[Int(slot)] = -1
        older[Int(slot)] = -1
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
            }
        return UInt64(itemID) << 3 | UInt64(variant.scale - 1) << 2 | format
    }

    /// The key `packed` made.
    init?(packed: UInt64) {
        let format: ImageFormat
        switch packed & 3 {
        case 0: format = .webp
        case 1: format = .jpeg
        default: return nil
        }
        self.init(itemID: Int64(packed >> 3), variant: ThumbnailVariant(scale: Int(packed >> 2 & 1) + 1, format: format))
    }
}
