import Testing

@testable import Thumbnails
@testable import WarmfeedCore

@Suite struct DiskTierIndexTests {
    @Test func keysPackIntoTwelveBytesAndBack() {
        let keys = [
            ThumbnailKey(itemID: 0, variant: ThumbnailVariant(scale: 1, format: .webp)),
            ThumbnailKey(itemID: 1, variant: ThumbnailVariant(scale: 2, format: .jpeg)),
            ThumbnailKey(itemID: 123_456_789, variant: ThumbnailVariant(scale: 2, format: .webp)),
            ThumbnailKey(itemID: (1 << 60) - 1, variant: ThumbnailVariant(scale: 1, format: .jpeg)),
        ]
        let packed = keys.compactMap(\.packed)
        #expect(packed.count == keys.count)
        #expect(Set(packed).count == keys.count)
        #expect(packed.map { ThumbnailKey(packed: $0) } == keys)
        // Ids the 8 bytes cannot hold, and an unknown density: not kept on disk, never confused with another.
        #expect(ThumbnailKey(itemID: -1, variant: ThumbnailVariant(scale: 1, format: .webp)).packed == nil)
        #expect(ThumbnailKey(itemID: 1 << 60, variant: ThumbnailVariant(scale: 1, format: .webp)).packed == nil)
        #expect(ThumbnailKey(itemID: 5, variant: ThumbnailVariant(scale: 3, format: .webp)).packed == nil)
    }

    @Test func evictsTheLeastRecentlyUsedPastTheDiskBudget() {
        var index = DiskTierIndex(diskBudget: 300, memoryBudget: 1 << 20)
        #expect(changed(&index) { $0.insert(1, size: 100) }.isEmpty)
        #expect(changed(&index) { $0.insert(2, size: 100) }.isEmpty)
        #expect(changed(&index) { $0.insert(3, size: 100) }.isEmpty)
        #expect(changed(&index) { $0.touch(1) })
        #expect(changed(&index) { $0.insert(4, size: 100) } == [2])
        #expect(index.keysByRecency == [4, 1, 3])
        #expect(index.diskBytes == 300)
        // A bigger replacement makes room for itself.
        #expect(changed(&index) { $0.insert(3, size: 200) } == [1])
        #expect(index.keysByRecency == [3, 4])
        // Larger than the whole budget: not kept, and its own file goes.
        #expect(changed(&index) { $0.insert(9, size: 301) } == [9])
        #expect(!index.contains(9))
        #expect(!changed(&index) { $0.touch(7) })
    }

    @Test func theMemoryBudgetBoundsTheEntries() {
        var index = DiskTierIndex(diskBudget: .max, memoryBudget: 64 << 10)
        #expect(index.maxEntries > 1000)
        for key in 0..<UInt64(index.maxEntries) { #expect(changed(&index) { $0.insert(DiskKey(item: key, tag: 0), size: 1) }.isEmpty) }
        // Full: each new thumbnail pushes out the least recently used one.
        #expect(changed(&index) { $0.insert(1_000_000, size: 1) } == [0])
        #expect(index.count == index.maxEntries)
        // What it holds stays within its budget (up to malloc's rounding of each of the six blocks).
        #expect(index.memoryBytes <= (64 << 10) + 6 * 64)
        #expect(index.memoryBytes > (64 << 10) / 2)
        // A small budget still indexes a few; none indexes nothing.
        #expect(DiskTierIndex(diskBudget: 1000, memoryBudget: 200).maxEntries >= 1)
        var none = DiskTierIndex(diskBudget: 1000, memoryBudget: 0)
        #expect(changed(&none) { $0.insert(1, size: 10) } == [1])
        #expect(none.count == 0)
    }

    @Test func theDefaultBudgetHoldsAboutAQuarterOfAMillion() {
        let index = DiskTierIndex(diskBudget: 1 << 30, memoryBudget: ThumbnailDiskTier.defaultIndexBudget)
        #expect((250_000...400_000).contains(index.maxEntries))
    }

    /// Random inserts, touches and removals against a plain list kept in
    /// recency order: the same keys in the same order, the same evictions.
    @Test func matchesAPlainModelUnderRandomUse() {
        var generator = SplitMix64(seed: 42)
        let budget = 5_000
        var index = DiskTierIndex(diskBudget: budget, memoryBudget: 2_000)
        var model: [(key: DiskKey, size: Int)] = []  // newest first
        for _ in 0..<20_000 {
            let key = DiskKey(item: generator.next() % 200, tag: 0)
            switch generator.next() % 4 {
            case 0, 1:
                let size = Int(generator.next() % 400) + 1
                let evicted = index.insert(key, size: size)
                model.removeAll { $0.key == key }
                model.insert((key, size), at: 0)
                var expected: [DiskKey] = []
                while model.count > index.maxEntries || model.reduce(0, { $0 + $1.size }) > budget {
                    expected.append(model.removeLast().key)
                }
                #expect(evicted == expected)
            case 2:
                let found = index.touch(key)
                if let at = model.firstIndex(where: { $0.key == key }) {
                    model.insert(model.remove(at: at), at: 0)
                    #expect(found)
                } else {
                    #expect(!found)
                }
            default:
                #expect(changed(&index) { $0.remove(key) } == model.contains { $0.key == key })
                model.removeAll { $0.key == key }
            }
            #expect(index.count == model.count)
        }
        #expect(index.keysByRecency == model.map(\.key))
        #expect(index.diskBytes == model.reduce(0) { $0 + $1.size })
    }
}

/// What a mutating call returns (`#expect` cannot mutate inside its expansion).
func changed<Value>(_ index: inout DiskTierIndex, _ call: (inout DiskTierIndex) -> Value) -> Value {
    call(&index)
}

extension DiskTierIndexTests {
    /// An item has one picture at a time on disk: a new one takes the old one's
    /// place (its file is among the evicted), and the old tag is a miss.
    @Test func aNewPictureOfAnItemTakesTheOldOnesPlace() {
        var index = DiskTierIndex(diskBudget: 1000, memoryBudget: 1 << 20)
        let old = DiskKey(item: 7 << 3, tag: 1)
        let new = DiskKey(item: 7 << 3, tag: 2)
        #expect(changed(&index) { $0.insert(old, size: 100) }.isEmpty)
        #expect(changed(&index) { $0.insert(new, size: 300) } == [old])
        let (touchedOld, touchedNew) = (changed(&index) { $0.touch(old) }, changed(&index) { $0.touch(new) })
        #expect(!touchedOld && touchedNew)
        let removedOld = changed(&index) { $0.remove(old) }
        #expect(!removedOld, "removing the old picture leaves the new one")
        #expect(index.count == 1 && index.diskBytes == 300)
        // The same picture written again replaces nothing: its file was overwritten in place.
        #expect(changed(&index) { $0.insert(new, size: 200) }.isEmpty)
        #expect(index.diskBytes == 200)
    }
}
