import ImageFormats
import WarmfeedCore

/// The disk tier's index: which thumbnails are on disk, each one's size and
/// its recency, in about 40 bytes a thumbnail and within a memory budget of
/// its own, as nginx's `keys_zone=name:size` bounds the keys of its proxy cache.
///
/// A pure value with no locks and no I/O: the tier wraps it in a `Mutex` and
/// unlinks the files of the keys it evicts. An entry is found by its item and
/// variant packed into 8 bytes (`DiskKey.item`) and holds its picture's tag
/// (4 bytes): an item has one picture at a time, so a new picture of an item
/// takes its old one's place (whose file goes), and a read for another tag is
/// a miss. Sizes take 4 bytes, the recency list (a `RecencyList`, as
/// `LRUCache`'s) two 4-byte links, with no optional slots: a removed entry's slot is filled with the
/// last one, so the arrays never hold a hole. The arrays and the table grow by
/// doubling, never past `maxEntries`, and the entry count is chosen so that
/// even at that size they fit the budget. Past `maxEntries` the least recently
/// used thumbnail makes room, as it does past the disk budget.
struct DiskTierIndex {
    /// What a file is indexed by: its item and variant, and its picture's tag.
    typealias Key = DiskKey

    /// The most bytes of thumbnails on disk.
    let diskBudget: Int
    /// The bytes of memory the index may hold.
    let memoryBudget: Int
    /// The most thumbnails indexed, the most the memory budget holds.
    let maxEntries: Int
    /// The bytes of thumbnails on disk now.
    private(set) var diskBytes = 0

    private var slotOf: [UInt64: Int32] = [:]
    private var items: [UInt64] = []
    private var tags: [UInt32] = []
    private var sizes: [UInt32] = []
    private var order = RecencyList<Int32>()

    /// The bytes one entry costs in the arrays: item, tag, size and two links.
    static let arrayBytesPerEntry = 8 + 4 + 4 + 4 + 4
    /// The bytes one bucket of the table costs: an item, a slot and a bit of its bitmap.
    static let bucketBytes = 8.0 + 4.0 + 1.0 / 8.0

    /// An empty index for `diskBudget` bytes on disk, holding as many entries
    /// as `memoryBudget` bytes of memory allow at their largest.
    init(diskBudget: Int, memoryBudget: Int) {
        self.diskBudget = max(0, diskBudget)
        self.memoryBudget = max(0, memoryBudget)
        self.maxEntries = Self.entries(within: self.memoryBudget)
    }

    /// How many thumbnails are indexed.
    var count: Int { items.count }

    /// The bytes of memory the index holds now (the capacity of its table and
    /// arrays, not only what is filled).
    var memoryBytes: Int {
        Self.tableBytes(capacity: slotOf.capacity)
            + items.capacity * 8 + tags.capacity * 4 + sizes.capacity * 4 + order.memoryBytes
    }

    private func slot(of key: Key) -> Int? {
        guard let slot = slotOf[key.item].map(Int.init), tags[slot] == key.tag else { return nil }
        return slot
    }

    /// Whether `key` is indexed; if so it becomes the most recently used.
    mutating func touch(_ key: Key) -> Bool {
        guard let slot = slot(of: key) else { return false }
        order.moveToNewest(slot)
        return true
    }

    /// Whether `key` is indexed, without touching its recency.
    func contains(_ key: Key) -> Bool { slot(of: key) != nil }

    /// Indexes `key` with `size` bytes on disk (replacing an older entry for
    /// its item and variant: of another picture, it is among those returned)
    /// as the most recently used, then evicts the least recently used past the
    /// disk budget or the entry count. Returns the keys evicted, oldest first,
    /// never `key` itself unless it alone is larger than the disk budget (or
    /// the memory budget holds no entry at all).
    mutating func insert(_ key: Key, size: Int) -> [Key] {
        var evicted: [Key] = []
        if let old = slotOf[key.item].map(Int.init), tags[old] != key.tag {
            evicted.append(Key(item: key.item, tag: tags[old]))
        }
        removeItem(key.item)
        guard size <= diskBudget, maxEntries > 0, size <= Int(UInt32.max) else { return evicted + [key] }
        // Room is made before the append, so the arrays never grow past `maxEntries`.
        while items.count >= maxEntries || diskBytes + size > diskBudget, let oldest = order.oldest {
            let victim = Key(item: items[oldest], tag: tags[oldest])
            removeItem(victim.item)
            evicted.append(victim)
        }
        grow()
        let slot = order.addSlot()
        items.append(key.item)
        tags.append(key.tag)
        sizes.append(UInt32(size))
        slotOf[key.item] = Int32(slot)
        order.linkAsNewest(slot)
        diskBytes += size
        return evicted
    }

    /// Forgets `key`; returns whether it was indexed.
    @discardableResult
    mutating func remove(_ key: Key) -> Bool {
        guard slot(of: key) != nil else { return false }
        return removeItem(key.item)
    }

    @discardableResult
    private mutating func removeItem(_ item: UInt64) -> Bool {
        guard let slot = slotOf.removeValue(forKey: item).map(Int.init) else { return false }
        order.unlink(slot)
        diskBytes -= Int(sizes[slot])
        let last = items.count - 1
        if slot != last {
            // The last entry moves into the hole, and its place in the order follows.
            let moved = items[last]
            items[slot] = moved
            tags[slot] = tags[last]
            sizes[slot] = sizes[last]
            slotOf[moved] = Int32(slot)
        }
        order.removeLastSlot(into: slot)
        items.removeLast()
        tags.removeLast()
        sizes.removeLast()
        return true
    }

    /// Keys from most to least recently used (for tests).
    var keysByRecency: [Key] { order.byRecency.map { Key(item: items[$0], tag: tags[$0]) } }

    /// Doubles the table and the arrays when they are full, never past `maxEntries`.
    private mutating func grow() {
        // Each array by the smallest capacity: malloc rounds each its own way, and
        // one left to grow by itself on append would double past `maxEntries`.
        let full = items.count >= min(items.capacity, tags.capacity, sizes.capacity, order.capacity)
        guard full || slotOf.count == slotOf.capacity else { return }
        let wanted = min(maxEntries, max(64, items.count * 2))
        if slotOf.count == slotOf.capacity { slotOf.reserveCapacity(wanted) }
        if full {
            items.reserveCapacity(wanted)
            tags.reserveCapacity(wanted)
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

/// A file's key in the disk tiers: a picture (`Picture`) and, for a
/// thumbnail, its variant; 12 bytes, of which the index finds an entry by
/// the first 8 (`item`) and keeps the tag.
struct DiskKey: Hashable, Sendable {
    /// The item id above 3 bits of variant (the density and the format; 0 for an original).
    var item: UInt64
    /// The picture's tag.
    var tag: UInt32

    /// An original's key; nil for an id outside 0..<2⁶⁰.
    init?(original picture: Picture) {
        guard picture.itemID >= 0, picture.itemID < 1 << 60 else { return nil }
        item = UInt64(picture.itemID) << 3
        tag = picture.tag
    }

    init(item: UInt64, tag: UInt32) {
        self.item = item
        self.tag = tag
    }

    /// The picture it names.
    var picture: Picture { Picture(itemID: Int64(item >> 3), tag: tag) }
}

extension ThumbnailKey {
    /// The key in 8 bytes and a tag: the picture's item id above 3 bits of variant
    /// (the density and the format), and its tag; nil for an id outside
    /// 0..<2⁶⁰ or a variant that does not fit, which the disk tier then does not keep.
    var packed: DiskKey? {
        guard itemID >= 0, itemID < 1 << 60, (1...2).contains(variant.scale) else { return nil }
        let format: UInt64 =
            switch variant.format {
            case .webp: 0
            case .jpeg: 1
            case .avif: 2
            }
        return DiskKey(item: UInt64(itemID) << 3 | UInt64(variant.scale - 1) << 2 | format, tag: picture.tag)
    }

    /// The key `packed` made.
    init?(packed: DiskKey) {
        let format: ImageFormat
        switch packed.item & 3 {
        case 0: format = .webp
        case 1: format = .jpeg
        case 2: format = .avif
        default: return nil
        }
        self.init(picture: packed.picture, variant: ThumbnailVariant(scale: Int(packed.item >> 2 & 1) + 1, format: format))
    }
}
