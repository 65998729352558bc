import Foundation
import Testing

@testable import WarmfeedCore

/// The page cache's frequency sketch: counts that never fall short, saturate
/// at 15, age by halves, and lose nothing to threads counting at once.
@Suite struct FrequencySketchTests {
    @Test func aKeyIsCountedUpToFifteenAndHalvedWhenAged() {
        let sketch = FrequencySketch(counters: 1 << 12)
        let key = "page 7".hashValue
        #expect(sketch.frequency(key) == 0)
        for ask in 1...20 { #expect(sketch.increment(key) == min(ask, 15), "ask \(ask)") }
        #expect(sketch.frequency(key) == 15)
        sketch.halve()
        #expect(sketch.frequency(key) == 7)
        sketch.halve()
        sketch.halve()
        sketch.halve()
        #expect(sketch.frequency(key) == 0)
    }

    @Test func fewKeysAmongManyCountersAreRarelyTakenForOthers() {
        // The page cache's size: 30,000 keys asked for twice, as deep pages are, about one key a word.
        let sketch = FrequencySketch(counters: 1 << 19)
        for key in 0..<30_000 {
            sketch.increment(key.hashValue)
            sketch.increment(key.hashValue)
        }
        // Never short: each is at least what it was asked.
        #expect((0..<30_000).allSatisfy { sketch.frequency($0.hashValue) >= 2 })
        // And new keys are seldom taken for asked-for ones (all four of their counters shared).
        let inflated = (30_000..<40_000).filter { sketch.frequency($0.hashValue) > 0 }.count
        #expect(inflated < 300, "\(inflated) of 10,000 new keys seem asked for")
    }

    @Test func threadsCountingAtOnceLoseNoAsk() {
        // Few words, so the threads meet on them.
        let sketch = FrequencySketch(counters: 1 << 8)
        let keys = (0..<8).map { "thread \($0)".hashValue }
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for _ in 0..<12 { sketch.increment(keys[thread]) }
        }
        // Every thread's 12 asks landed: a word another thread raised was never written back stale.
        let short = keys.filter { sketch.frequency($0) < 12 }
        #expect(short.isEmpty, "\(short.count) keys lost asks")
    }
}
