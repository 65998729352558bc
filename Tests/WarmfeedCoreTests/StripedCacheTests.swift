import Foundation
import Synchronization
import Testing

@testable import WarmfeedCore

/// The page and thumbnail caches' store: a segmented LRU's scan resistance, reads
/// that take no lock, and counts that add up under many threads at once.
@Suite struct StripedCacheTests {
    @Test func aOnePassScanDoesNotEvictWhatWasSeenTwice() {
        let cache = StripedCache<String, Int>(capacity: 100, stripes: 1)
        // Ten readers' pages, each read twice.
        for n in 0..<10 { cache.insert(n, for: "reader \(n)", cost: 5) }
        for n in 0..<10 { #expect(cache.value(for: "reader \(n)") == n) }
        // A crawler walks 10,000 pages once each.
        for n in 0..<10_000 { cache.insert(n, for: "crawl \(n)", cost: 5) }
        for n in 0..<10 { #expect(cache.contains("reader \(n)"), "reader \(n)") }
        #expect(cache.usage.cost <= 100)
    }

    @Test func aOnePassScanDoesNotEvictWhatWasSeenTwiceInAnyStripe() {
        // 64 stripes of 1,000: readers' pages spread over them, a crawler through all.
        let cache = StripedCache<String, Int>(capacity: 64_000, stripes: 64)
        for n in 0..<200 { cache.insert(n, for: "reader \(n)", cost: 50) }
        for n in 0..<200 { #expect(cache.value(for: "reader \(n)") == n) }
        for n in 0..<50_000 { cache.insert(n, for: "crawl \(n)", cost: 50) }
        let kept = (0..<200).filter { cache.contains("reader \($0)") }.count
        // A stripe whose readers' pages alone pass its protected share loses some; nearly all stay.
        #expect(kept >= 190, "\(kept) of 200 readers' pages kept")
        #expect(cache.usage.cost <= 64_000)
    }

    @Test func aPageReadAgainAfterACrawlerPushedItOffProbationComesBackProtected() {
        let cache = StripedCache<String, Int>(capacity: 100, stripes: 1)
        var hits = 0
        var reads = 0
        var crawled = 0
        for _ in 0..<50 {
            for n in 0..<10 {
                reads += 1
                if cache.value(for: "reader \(n)") != nil { hits += 1 } else { cache.insert(n, for: "reader \(n)", cost: 5) }
                for _ in 0..<3 {
                    cache.insert(crawled, for: "crawl \(crawled)", cost: 5)
                    crawled += 1
                }
            }
        }
        // The first two reads of each page miss (the second brings it back from the ghosts, protected); every later one hits.
        #expect(hits == reads - 20)
        #expect(cache.usage.cost <= 100)
    }

    @Test func aNewKeyIsRefusedOverTheVictimItWouldEvictOnlyWhenTheStripeIsFull() {
        let cache = StripedCache<Int, Int>(capacity: 30, stripes: 1)
        var victims: [Int] = []
        // Room: kept without asking.
        for key in 1...3 {
            #expect(
                cache.insert(
                    key, for: key, cost: 10,
                    unlessOver: {
                        victims.append($0); return true
                    }) == [])
        }
        #expect(victims.isEmpty && cache.usage.count == 3)
        // Full: refused over the oldest probation entry not used since it came, and nothing changes.
        _ = cache.value(for: 1)
        #expect(
            cache.insert(
                4, for: 4, cost: 10,
                unlessOver: {
                    victims.append($0); return true
                }) == nil)
        #expect(victims == [2] && cache.usage.count == 3 && cache.value(for: 4) == nil)
        // Not refused: kept, and the victim (or an older entry) is evicted as by `insert`.
        #expect(cache.insert(4, for: 4, cost: 10, unlessOver: { _ in false })?.isEmpty == false)
        #expect(cache.value(for: 4) == 4 && cache.usage.cost <= 30)
        // A key kept already is replaced without asking.
        victims = []
        #expect(
            cache.insert(
                40, for: 4, cost: 10,
                unlessOver: {
                    victims.append($0); return true
                }) == [])
        #expect(victims.isEmpty && cache.value(for: 4) == 40)
    }

    @Test func entriesCostlierThanAStripeAreNotKeptAndReplacingKeepsOneEntry() {
        let cache = StripedCache<Int, Int>(capacity: 50, stripes: 1)
        #expect(cache.insert(1, for: 1, cost: 51) == [1])
        #expect(cache.usage.count == 0 && cache.value(for: 1) == nil)
        cache.insert(1, for: 1, cost: 10)
        _ = cache.value(for: 1)
        let replaced = cache.insert(2, for: 1, cost: 20)
        #expect(replaced.isEmpty)
        #expect(cache.usage.count == 1 && cache.usage.cost == 20)
        #expect(cache.value(for: 1) == 2)
    }

    @Test func stripesAreAPowerOfTwoAndShareTheBudget() {
        let cache = StripedCache<Int, Int>(capacity: 64 << 20)
        #expect(cache.stripeCapacity * 128 == 64 << 20)
        let small = StripedCache<Int, Int>(capacity: 1000)
        #expect(small.stripeCapacity == 1000)
        let odd = StripedCache<Int, Int>(capacity: 3000, stripes: 3)
        #expect(odd.stripeCapacity == 750)
    }

    /// Many threads read, insert and replace at once: every value read is
    /// the one written for its key, the budget holds, and the cache's own
    /// totals agree with its tables.
    @Test func manyThreadsReadingAndWritingAtOnceLoseNothing() async {
        let cache = StripedCache<Int, [Int]>(capacity: 200_000, stripes: 16)
        let wrong = Atomic<Int>(0)
        let found = Atomic<Int>(0)
        let group = DispatchGroup()
        for thread in 0..<6 {
            group.enter()
            Thread {
                var generator = SystemRandomNumberGenerator()
                for step in 0..<5_000 {
                    // A hot set every thread reads, and a long tail.
                    let key = step % 3 == 0 ? Int.random(in: 0..<50, using: &generator) : Int.random(in: 0..<5_000, using: &generator)
                    if let value = cache.value(for: key) {
                        found.add(1, ordering: .relaxed)
                        if value.first != key || value.count != 4 { wrong.add(1, ordering: .relaxed) }
                    } else {
                        cache.insert([key, thread, step, 0], for: key, cost: 100 + key % 400)
                    }
                }
                group.leave()
            }.start()
        }
        // Waited for without holding one of Swift's few cooperative threads, which other suites need meanwhile.
        await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
        cache.reclaim()
        #expect(wrong.load(ordering: .relaxed) == 0)
        #expect(found.load(ordering: .relaxed) > 0)
        let usage = cache.usage
        #expect(usage.cost <= 200_000)
        // The kept cost is the sum of what the tables hold.
        var counted = 0
        var cost = 0
        for key in 0..<5_000 where cache.contains(key) {
            counted += 1
            cost += 100 + key % 400
        }
        #expect(counted == usage.count)
        #expect(cost == usage.cost)
    }
}
