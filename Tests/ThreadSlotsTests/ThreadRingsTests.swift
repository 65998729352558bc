import Foundation
import Synchronization
import Testing

@testable import ThreadSlots

/// Per-thread rings: what many threads record, one consumer drains, in each
/// thread's order, nothing lost but what a full ring drops, and counted.
@Suite struct ThreadRingsTests {
    struct Record: BitwiseCopyable, Equatable {
        var thread: Int
        var sequence: Int
        /// Both fields again, so a torn record shows.
        var check: Int
    }

    @Test func oneThreadsRecordsComeOutInOrderAndAFullRingDrops() {
        let rings = ThreadRings<Record>(capacity: 8, slots: 4)
        for index in 0..<8 { #expect(rings.record(Record(thread: 0, sequence: index, check: index))) }
        #expect(!rings.record(Record(thread: 0, sequence: 8, check: 8)), "the ring is full")
        #expect(rings.dropped == 1)
        var out: [Int] = []
        #expect(rings.drain { out.append($0.sequence) } == 8)
        #expect(out == Array(0..<8))
        // Freed cells take the next lap.
        for index in 8..<20 { _ = rings.record(Record(thread: 0, sequence: index, check: index)) }
        out = []
        rings.drain { out.append($0.sequence) }
        #expect(out == Array(8..<16) && rings.dropped == 5)
    }

    /// Threads recording while one drains all the while: every record is
    /// drained or counted dropped, none twice, none torn, each thread's in order.
    @Test func manyThreadsRecordWhileOneDrains() async throws {
        let rings = ThreadRings<Record>(capacity: 64, slots: 4)  // fewer rings than threads: some share
        let threads = 12
        let each = 20_000
        let results = DrainResults()
        let drainer = Thread {
            var last = [Int](repeating: -1, count: threads)
            var drained = 0
            var torn = 0
            var disordered = 0
            func take() {
                drained += rings.drain { record in
                    if record.check != record.thread &* 1_000_003 &+ record.sequence { torn += 1 }
                    if record.sequence <= last[record.thread] { disordered += 1 }
                    last[record.thread] = record.sequence
                }
            }
            while results.done.load(ordering: .acquiring) < threads { take() }
            take()
            results.value.withLock { $0 = (drained, torn, disordered) }
        }
        drainer.start()
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<threads {
                group.addTask {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        Thread {
                            var mine = 0
                            for sequence in 0..<each where rings.record(Record(thread: thread, sequence: sequence, check: thread &* 1_000_003 &+ sequence)) {
                                mine += 1
                            }
                            results.accepted.add(mine, ordering: .relaxed)
                            results.done.add(1, ordering: .releasing)
                            continuation.resume()
                        }.start()
                    }
                }
            }
        }
        while results.value.withLock({ $0 == nil }) { try await Task.sleep(for: .milliseconds(10)) }
        let (drained, torn, disordered) = results.value.withLock { $0! }
        #expect(torn == 0 && disordered == 0)
        #expect(drained == results.accepted.load(ordering: .relaxed), "every record taken was drained once")
        #expect(drained + rings.dropped == threads * each, "the counts add up")
        #expect(drained > 0)
    }

}

/// What the drainer found, handed back to the test.
final class DrainResults: Sendable {
    let value = Mutex<(Int, Int, Int)?>(nil)
    /// Recording threads that ended, and the records they got in.
    let done = Atomic<Int>(0)
    let accepted = Atomic<Int>(0)
}
