import Foundation
import Synchronization
import Testing

@testable import ThreadSlots

/// The doorbell a ring's consumer sleeps on: a record made while it sleeps
/// (or is going to sleep) always wakes it, and a shutdown or a cancellation
/// does too.
@Suite struct DoorbellTests {
    /// Threads recording in bursts with pauses between, so the consumer runs
    /// out of records and sleeps again and again, often at the moment a
    /// record comes in: it is never left asleep with a record in a ring.
    /// (A lost wake-up leaves it asleep: the watchdog then finds records
    /// neither drained nor dropped.)
    @Test func aRecordMadeWhileTheConsumerSleepsAlwaysWakesIt() async throws {
        let rings = ThreadRings<Int>(capacity: 1024, slots: 8)
        let bell = Doorbell()
        let threads = 8
        let each = 3_000
        let total = threads * each
        let drained = Atomic<Int>(0)
        @Sendable func take() -> Bool {
            rings.drain { _ in drained.add(1, ordering: .relaxed) } > 0
        }
        let consumer = Task {
            while drained.load(ordering: .relaxed) + rings.dropped < total, !Task.isCancelled {
                if take() { continue }
                await bell.wait(unless: take)
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<threads {
                group.addTask {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        Thread {
                            var generator = SystemRandomNumberGenerator()
                            for sequence in 0..<each {
                                _ = rings.record(thread * each + sequence)
                                bell.ring()
                                if sequence % 10 == 9 { usleep(UInt32.random(in: 0...300, using: &generator)) }
                            }
                            continuation.resume()
                        }.start()
                    }
                }
            }
        }
        // Every record is in a ring (or dropped) now; a consumer left asleep never takes the rest.
        var waited = 0
        while drained.load(ordering: .relaxed) + rings.dropped < total, waited < 3_000 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        let left = total - drained.load(ordering: .relaxed) - rings.dropped
        #expect(left == 0, "records left in the rings with the consumer asleep")
        consumer.cancel()
        await consumer.value
    }

    /// One producer in lockstep with the consumer: each record is made once
    /// the last was drained, every other one once the consumer has armed
    /// the bell (it sleeps, or is about to), 20,000 times; a record it slept
    /// through stalls the lockstep, which the producer's patience (60 s: the
    /// consumer's task may wait its turn on a pool other suites keep busy) reports. (The narrowest race, a record
    /// between the consumer's last look and its arming, is what `wait`'s
    /// look after arming closes: `closingOrCancellingWakesTheSleeper` checks
    /// that look directly.)
    @Test func aRecordMadeAsTheConsumerGoesToSleepWakesIt() async {
        let lockstep = Lockstep()
        let rounds = 20_000
        let consumer = Task {
            while lockstep.drained.load(ordering: .relaxed) < rounds, !Task.isCancelled {
                if lockstep.take() { continue }
                await lockstep.bell.wait(unless: lockstep.take)
            }
        }
        let stalled = await withCheckedContinuation { (continuation: CheckedContinuation<Int?, Never>) in
            Thread {
                for round in 0..<rounds {
                    // Every other record waits until the consumer, its rings empty, has armed the bell: made while it sleeps.
                    let armedBy = Date().addingTimeInterval(60)
                    while round % 2 == 0, !lockstep.bell.isArmed {
                        if Date() > armedBy {
                            continuation.resume(returning: round)
                            return
                        }
                        sched_yield()
                    }
                    _ = lockstep.rings.record(round)
                    lockstep.bell.ring()
                    let deadline = Date().addingTimeInterval(60)
                    while lockstep.drained.load(ordering: .acquiring) <= round {
                        if Date() > deadline {
                            continuation.resume(returning: round)
                            return
                        }
                        sched_yield()
                    }
                }
                continuation.resume(returning: nil)
            }.start()
        }
        #expect(stalled == nil, "the consumer slept through a record")
        consumer.cancel()
        await consumer.value
    }

    /// A ring, its bell and what the consumer drained.
    final class Lockstep: Sendable {
        let rings = ThreadRings<Int>(capacity: 16, slots: 4)
        let bell = Doorbell()
        let drained = Atomic<Int>(0)

        /// Drains the rings; whether there was a record.
        func take() -> Bool {
            rings.drain { _ in drained.add(1, ordering: .releasing) } > 0
        }
    }

    /// A shutdown wakes the sleeper and keeps it from sleeping again; a
    /// cancelled sleeper wakes too; a ring with no one asleep is kept for the next wait.
    @Test func closingOrCancellingWakesTheSleeper() async {
        let bell = Doorbell()
        let asleep = Task { await bell.wait(unless: { false }) }
        while !bell.isArmed { await Task.yield() }
        bell.close()
        await asleep.value
        await bell.wait(unless: { false })  // closed: returns at once

        let other = Doorbell()
        let cancelled = Task { await other.wait(unless: { false }) }
        while !other.isArmed { await Task.yield() }
        cancelled.cancel()
        await cancelled.value

        // Armed, then found work: it does not sleep (nothing would wake it here), and is disarmed.
        let third = Doorbell()
        let returned = Atomic<Bool>(false)
        let working = Task {
            await third.wait(unless: { true })
            returned.store(true, ordering: .relaxed)
        }
        var waited = 0
        while !returned.load(ordering: .relaxed), waited < 1_000 {
            try? await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        let didReturn = returned.load(ordering: .relaxed)
        #expect(didReturn, "it slept with work found")
        third.close()
        await working.value
        #expect(!third.isArmed)
    }
}
