import Foundation
import Synchronization
import Testing
@testable import ThreadSlots

/// Runs `body(index)` on `count` threads of their own at once, and waits for
/// all without blocking the caller's thread: a test that blocked one of
/// Swift's few cooperative threads (two on a two-core machine) while its
/// threads ran starved every other suite's async work meanwhile (CI saw
/// origin-fetch tests time out beside these).
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            let thread = Thread {
                body(index)
                group.leave()
            }
            thread.start()
        }
        group.notify(queue: .global()) { continuation.resume() }
    }
}

@Suite struct ThreadSlotTests {
    /// Threads alive at once never share a number.
    @Test func eachThreadHasItsOwnNumberForItsWholeLife() async {
        let seen = Mutex([Int]())
        await onThreads(16) { _ in
            let first = ThreadSlot.current
            seen.withLock { $0.append(first) }
            // Every thread stays alive until all 16 have their numbers.
            while seen.withLock({ $0.count }) < 16 { usleep(1000) }
            for _ in 0..<1000 { precondition(ThreadSlot.current == first) }
        }
        let numbers = seen.withLock { $0 }
        #expect(numbers.count == 16)
        #expect(Set(numbers).count == 16, "no two threads share a number: \(numbers)")
        #expect(numbers.allSatisfy { $0 < ThreadSlot.issued })
    }

    /// Threads that come and go one after another reuse the numbers of those
    /// that ended, instead of counting up for ever.
    @Test func theNumbersOfEndedThreadsAreGivenOutAgain() async {
        for _ in 0..<50 { await onThreads(1) { _ in _ = ThreadSlot.current } }
        let before = ThreadSlot.issued
        for _ in 0..<100 { await onThreads(1) { _ in _ = ThreadSlot.current } }
        // Other suites' threads run meanwhile; 100 more threads did not take 100 more numbers.
        #expect(ThreadSlot.issued < before + 50)
    }
}

@Suite struct ThreadCountersTests {
    /// Many threads add at once; the sums lose nothing.
    @Test func additionsFromManyThreadsAllCount() async {
        let counters = ThreadCounters(count: 3)
        await onThreads(12) { index in
            for step in 0..<20_000 {
                counters.add(0)
                counters.add(1, index)
                if step % 2 == 0 { counters.add(2, -1) }
            }
        }
        #expect(counters.value(0) == 12 * 20_000)
        #expect(counters.value(1) == (0..<12).reduce(0) { $0 + $1 * 20_000 })
        #expect(counters.values == [12 * 20_000, (0..<12).reduce(0) { $0 + $1 * 20_000 }, -12 * 10_000])
    }

    /// More threads than slots: they share slots, and still lose nothing.
    @Test func threadsPastTheSlotsShareThemWithoutLosingAdditions() async {
        let counters = ThreadCounters(count: 1, slots: 2)
        await onThreads(8) { _ in for _ in 0..<10_000 { counters.add(0) } }
        #expect(counters.value(0) == 80_000)
    }
}

@Suite struct ReadEpochsTests {
    /// A reader inside `read` holds the epoch back: what was retired while it
    /// read is not released until it has left.
    @Test func aReaderInsideHoldsBackTheEpochUntilItLeaves() async {
        let epochs = ReadEpochs()
        let retiredAt = epochs.current
        let inside = DispatchSemaphore(value: 0)
        let leave = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        Thread {
            _ = epochs.read {
                inside.signal()
                leave.wait()
            }
            done.signal()
        }.start()
        inside.wait()
        // At most one step while the reader is in: it announced this epoch.
        for _ in 0..<10 { _ = epochs.advance() }
        #expect(epochs.advance() < retiredAt, "released while a reader that may hold it reads")
        #expect(epochs.current <= retiredAt + 1)
        leave.signal()
        done.wait()
        _ = epochs.advance()
        #expect(epochs.advance() >= retiredAt, "released once no reader can hold it")
    }

    /// Objects retired all the while readers read: none is released while
    /// a reader that loaded it may still use it (a use of a released object
    /// reads the poison written into it).
    @Test func readersNeverSeeAReleasedObject() async {
        final class Box: @unchecked Sendable {
            var value: Int
            init(_ value: Int) { self.value = value }
        }
        let epochs = ReadEpochs()
        let current = Atomic<Unmanaged<Box>>(Unmanaged.passRetained(Box(0)))
        let readersDone = Atomic<Int>(0)
        let poisoned = Atomic<Int>(0)
        let reads = Atomic<Int>(0)
        // Bounded work that sleeps now and then: this runs beside every other
        // suite, and threads spinning for seconds starved their timers.
        await onThreads(5) { index in
            if index == 0 {
                // The writer: publish, retire, release what the epochs allow, until the readers are done.
                var retired: [(Unmanaged<Box>, UInt64)] = []
                var step = 0
                while readersDone.load(ordering: .acquiring) < 4 {
                    step += 1
                    let old = current.exchange(Unmanaged.passRetained(Box(step)), ordering: .sequentiallyConsistent)
                    atomicMemoryFence(ordering: .sequentiallyConsistent)
                    retired.append((old, epochs.current))
                    let bound = epochs.advance()
                    retired.removeAll { box, epoch in
                        guard epoch <= bound else { return false }
                        box._withUnsafeGuaranteedRef { $0.value = -1 }  // poison, then release
                        box.release()
                        return true
                    }
                    if step % 16 == 0 { usleep(50) }
                }
                for (box, _) in retired { box.release() }
            } else {
                for count in 1...3_000 {
                    if count % 16 == 0 { usleep(50) }
                    _ = epochs.read {
                        let box = current.load(ordering: .acquiring)
                        for _ in 0..<50 where box._withUnsafeGuaranteedRef({ $0.value }) < 0 {
                            poisoned.add(1, ordering: .relaxed)
                        }
                        reads.add(1, ordering: .relaxed)
                    }
                }
                readersDone.add(1, ordering: .releasing)
            }
        }
        current.load(ordering: .acquiring).release()
        #expect(reads.load(ordering: .relaxed) > 0)
        #expect(poisoned.load(ordering: .relaxed) == 0)
    }

    @Test func aThreadPastTheSlotsIsToldToReadAnotherWay() async {
        let epochs = ReadEpochs(slots: 1)
        let answers = Mutex([Bool]())
        await onThreads(4) { _ in
            let answer = epochs.read { true }
            answers.withLock { $0.append(answer != nil) }
            // Alive until all four have read: a thread that ended would give its number to the next.
            while answers.withLock({ $0.count }) < 4 { usleep(1000) }
        }
        // Four threads alive at once have four numbers: at most one of them is slot 0.
        #expect(answers.withLock { $0.filter { $0 }.count } <= 1)
    }
}
