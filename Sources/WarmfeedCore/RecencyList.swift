/// The recency order of numbered slots: a doubly linked list threaded through
/// two arrays of links, one per slot, so a hit touches two integers and no
/// entry is ever copied. The one LRU list `LRUCache` (a map) and
/// `DiskTierIndex` (packed keys, 4-byte links) both keep their order in.
///
/// Slots are numbered from 0, in the order they were added; what each slot
/// holds lives in the owner's own arrays, at the same number. A slot is either
/// linked (somewhere in the order) or not; a new slot is not.
public struct RecencyList<Link: FixedWidthInteger & SignedInteger & Sendable>: Sendable {
    @usableFromInline var newer: [Link] = []
    @usableFromInline var older: [Link] = []
    @usableFromInline var newestLink: Link = -1
    @usableFromInline var oldestLink: Link = -1

    @inlinable public init() {}

    /// How many slots there are, linked or not.
    @inlinable public var slotCount: Int { newer.count }

    /// The slots it holds room for without growing.
    @inlinable public var capacity: Int { min(newer.capacity, older.capacity) }

    /// The bytes the links hold (their capacity, not only what is filled).
    @inlinable public var memoryBytes: Int { (newer.capacity + older.capacity) * MemoryLayout<Link>.stride }

    /// The most recently used slot; nil when none is linked.
    @inlinable public var newest: Int? { newestLink == -1 ? nil : Int(newestLink) }

    /// The least recently used slot; nil when none is linked.
    @inlinable public var oldest: Int? { oldestLink == -1 ? nil : Int(oldestLink) }

    /// Adds a slot, numbered `slotCount`, not linked; returns its number.
    @inlinable public mutating func addSlot() -> Int {
        newer.append(-1)
        older.append(-1)
        return newer.count - 1
    }

    /// Makes room for `slots` slots without growing again.
    @inlinable public mutating func reserveCapacity(_ slots: Int) {
        newer.reserveCapacity(slots)
        older.reserveCapacity(slots)
    }

    /// Links `slot`, not linked, as the most recently used.
    @inlinable public mutating func linkAsNewest(_ slot: Int) {
        older[slot] = newestLink
        newer[slot] = -1
        if let newest { newer[newest] = Link(slot) }
        newestLink = Link(slot)
        if oldestLink == -1 { oldestLink = Link(slot) }
    }

    /// Takes `slot` out of the order (its number stays).
    @inlinable public mutating func unlink(_ slot: Int) {
        let (newerSlot, olderSlot) = (newer[slot], older[slot])
        if newerSlot != -1 { older[Int(newerSlot)] = olderSlot } else { newestLink = olderSlot }
        if olderSlot != -1 { newer[Int(olderSlot)] = newerSlot } else { oldestLink = newerSlot }
        newer[slot] = -1
        older[slot] = -1
    }

    /// Makes linked `slot` the most recently used.
    @inlinable public mutating func moveToNewest(_ slot: Int) {
        guard slot != newest else { return }
        unlink(slot)
        linkAsNewest(slot)
    }

    /// Removes the last slot, linked, after its place in the order moves to
    /// `hole`, a slot already unlinked: so the owner, moving its last entry
    /// into a hole, keeps no gap. `hole` may be the last slot itself, unlinked.
    @inlinable public mutating func removeLastSlot(into hole: Int) {
        let last = newer.count - 1
        if hole != last {
            let (newerSlot, olderSlot) = (newer[last], older[last])
            newer[hole] = newerSlot
            older[hole] = olderSlot
            if newerSlot != -1 { older[Int(newerSlot)] = Link(hole) } else { newestLink = Link(hole) }
            if olderSlot != -1 { newer[Int(olderSlot)] = Link(hole) } else { oldestLink = Link(hole) }
        }
        newer.removeLast()
        older.removeLast()
    }

    /// The linked slots from most to least recently used.
    @inlinable public var byRecency: [Int] {
        var slots: [Int] = []
        var slot = newestLink
        while slot != -1 {
            slots.append(Int(slot))
            slot = older[Int(slot)]
        }
        return slots
    }
}
