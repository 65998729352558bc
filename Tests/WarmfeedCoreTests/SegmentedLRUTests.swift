import Testing
@testable import WarmfeedCore

/// The segmented LRU under the page cache and the thumbnail memory tier:
/// driven operation by operation, and against a plain model.
@Suite struct SegmentedLRUTests {
    @Test func aOnePassScanDoesNotEvictWhatWasSeenTwice() {
        var cache = SegmentedLRU<String, Int>(capacity: 100)
        // Ten readers' pages, each read twice: protected.
        for n in 0..<10 { cache.insert(n, for: "reader \(n)", cost: 5) }
        for n in 0..<10 { #expect(cache.value(for: "reader \(n)") == n) }
        #expect(cache.protectedCost == 50)
        // A crawler walks 10,000 pages once each.
        for n in 0..<10_000 { cache.insert(n, for: "crawl \(n)", cost: 5) }
        for n in 0..<10 { #expect(cache.contains("reader \(n)"), "reader \(n)") }
        #expect(cache.totalCost <= 100)

        // The same with a plain LRU: every reader's page is gone.
        var plain = LRUCache<String, Int>(capacity: 100)
        for n in 0..<10 { plain.insert(n, for: "reader \(n)", cost: 5) }
        for n in 0..<10 { _ = plain.value(for: "reader \(n)") }
        for n in 0..<10_000 { plain.insert(n, for: "crawl \(n)", cost: 5) }
        #expect((0..<10).allSatisfy { !plain.contains("reader \($0)") })
    }

    @Test func aPageReadAgainAfterACrawlerPushedItOffProbationComesBackProtected() {
        var cache = SegmentedLRU<String, Int>(capacity: 100)
        var hits = 0
        var reads = 0
        // Readers cycle over 10 pages; between two reads of one page the crawler brings 30 new ones.
        var crawled = 0
        for cycle in 0..<50 {
            for n in 0..<10 {
                reads += 1
                if cache.value(for: "reader \(n)") != nil { hits += 1 } else { cache.insert(n, for: "reader \(n)", cost: 5) }
                for _ in 0..<3 {
                    cache.insert(crawled, for: "crawl \(crawled)", cost: 5)
                    crawled += 1
                }
            }
            if cycle == 1 { #expect(hits == 0, "the first two reads of each page miss") }
        }
        #expect(hits == reads - 20)
        #expect(cache.totalCost <= 100)
    }

    @Test func aHitOnProbationPromotesAndTheProtectedOverflowIsDemotedNotDropped() {
        var cache = SegmentedLRU<Int, Int>(capacity: 100, protectedShare: 0.5)
        for n in 0..<10 { cache.insert(n, for: n, cost: 10) }
        #expect(cache.protectedCost == 0 && cache.totalCost == 100)
        for n in 0..<6 { _ = cache.value(for: n) }
        // 60 seen twice, 50 may be protected: the least recent of them (0) went back to probation.
        #expect(cache.protectedCost == 50)
        #expect(cache.count == 10 && cache.totalCost == 100)
        // Room is made at probation's tail: 6..9 (inserted earlier than 0 went back), then 0.
        let evicted = cache.insert(10, for: 10, cost: 10)
        #expect(evicted.map(\.key) == [6])
        #expect(cache.contains(0) && (1..<6).allSatisfy { cache.contains($0) })
    }

    @Test func entriesCostlierThanTheWholeBudgetAreNotKeptAndReplacingKeepsOneEntry() {
        var cache = SegmentedLRU<Int, Int>(capacity: 50)
        #expect(cache.insert(1, for: 1, cost: 51).isEmpty && cache.count == 0)
        cache.insert(1, for: 1, cost: 10)
        _ = cache.value(for: 1)
        cache.insert(2, for: 1, cost: 20)
        #expect(cache.count == 1 && cache.totalCost == 20 && cache.protectedCost == 20, "a protected entry replaced stays protected")
        #expect(cache.value(for: 1) == 2)
        #expect(cache.removeValue(for: 1) == 2 && cache.count == 0 && cache.totalCost == 0)
    }

    /// A plain model of the same policy, written for clarity: arrays, linear scans.
    struct Model {
        let capacity: Int
        let protectedCapacity: Int
        var probation: [(key: Int, cost: Int)] = []  // most recent first
        var protected: [(key: Int, cost: Int)] = []
        var ghosts: [Int] = []  // most recent first, at most `ghostKeys`
        let ghostKeys = 8
        var total: Int { (probation + protected).reduce(0) { $0 + $1.cost } }

        mutating func get(_ key: Int) -> Bool {
            if let index = protected.firstIndex(where: { $0.key == key }) {
                protected.insert(protected.remove(at: index), at: 0)
                return true
            }
            guard let index = probation.firstIndex(where: { $0.key == key }) else { return false }
            protect(probation.remove(at: index))
            return true
        }

        mutating func protect(_ entry: (key: Int, cost: Int)) {
            protected.insert(entry, at: 0)
            while protected.reduce(0, { $0 + $1.cost }) > protectedCapacity, let last = protected.popLast() {
                probation.insert(last, at: 0)
            }
        }

        mutating func put(_ key: Int, cost: Int) -> [Int] {
            let wasProtected = protected.contains { $0.key == key }
            probation.removeAll { $0.key == key }
            protected.removeAll { $0.key == key }
            guard cost <= capacity else { return [] }
            if wasProtected {
                protect((key, cost))
            } else if let ghost = ghosts.firstIndex(of: key) {
                ghosts.remove(at: ghost)
                protect((key, cost))
            } else {
                probation.insert((key, cost), at: 0)
            }
            var evicted: [Int] = []
            while total > capacity {
                if let last = probation.popLast() {
                    evicted.append(last.key)
                    ghosts.removeAll { $0 == last.key }
                    ghosts.insert(last.key, at: 0)
                    if ghosts.count > ghostKeys { ghosts.removeLast() }
                } else if let last = protected.popLast() {
                    evicted.append(last.key)
                }
            }
            return evicted
        }
    }

    @Test func twentyThousandRandomOperationsMatchThePlainModel() {
        var generator = SystemRandomNumberGenerator()
        for share in [0.0, 0.5, 0.8, 1.0] {
            var cache = SegmentedLRU<Int, Int>(capacity: 200, protectedShare: share, ghostKeys: 8)
            var model = Model(capacity: 200, protectedCapacity: cache.protectedCapacity)
            for step in 0..<5000 {
                let key = Int.random(in: 0..<60, using: &generator)
                if Bool.random(using: &generator) {
                    let cost = Int.random(in: 1...40, using: &generator)
                    let evicted = cache.insert(key, for: key, cost: cost).map(\.key)
                    #expect(evicted == model.put(key, cost: cost), "step \(step), share \(share)")
                } else {
                    #expect((cache.value(for: key) != nil) == model.get(key), "step \(step), share \(share)")
                }
                #expect(cache.totalCost == model.total && cache.totalCost <= 200)
                #expect(cache.protectedCost <= cache.protectedCapacity)
            }
        }
    }
}
