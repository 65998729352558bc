import Testing
@testable import WarmfeedCore

@Suite struct LRUCacheTests {
    @Test func evictsLeastRecentlyUsedByCost() {
        var cache = LRUCache<String, Int>(capacity: 10)
        cache.insert(1, for: "a", cost: 4)
        cache.insert(2, for: "b", cost: 4)
        #expect(cache.value(for: "a") == 1)  // a is now the most recent
        let evicted = cache.insert(3, for: "c", cost: 4)
        #expect(evicted.map(\.key) == ["b"])
        #expect(cache.keysByRecency == ["c", "a"])
        #expect(cache.totalCost == 8)
    }

    @Test func evictsSeveralToFitOneLargeEntry() {
        var cache = LRUCache<Int, String>(capacity: 10)
        for key in 0..<5 { cache.insert("v\(key)", for: key, cost: 2) }
        let evicted = cache.insert("big", for: 9, cost: 7)
        #expect(evicted.map(\.key) == [0, 1, 2, 3])
        #expect(cache.count == 2)
        #expect(cache.totalCost == 9)
    }

    @Test func refusesAnEntryLargerThanTheWholeCache() {
        var cache = LRUCache<Int, Int>(capacity: 10)
        cache.insert(1, for: 1, cost: 5)
        #expect(cache.insert(2, for: 2, cost: 11).isEmpty)
        #expect(!cache.contains(2))
        #expect(cache.contains(1))
    }

    @Test func replacingAKeyAdjustsItsCost() {
        var cache = LRUCache<Int, Int>(capacity: 10)
        cache.insert(1, for: 1, cost: 6)
        cache.insert(2, for: 1, cost: 3)
        #expect(cache.totalCost == 3)
        #expect(cache.value(for: 1) == 2)
        #expect(cache.count == 1)
    }

    @Test func removalAndReuseOfSlotsKeepTheOrder() {
        var cache = LRUCache<Int, Int>(capacity: 100)
        for key in 0..<10 { cache.insert(key, for: key, cost: 1) }
        cache.removeValue(for: 3)
        cache.removeValue(for: 9)
        cache.removeValue(for: 0)
        cache.insert(42, for: 42, cost: 1)
        _ = cache.value(for: 1)
        #expect(cache.keysByRecency == [1, 42, 8, 7, 6, 5, 4, 2])
        #expect(cache.totalCost == 8)
    }
}
