import Dispatch
import Testing

@testable import Workers

@Suite("The worker pool's threads")
struct WorkerPoolTests {
    @Test("A running job can see that a job more urgent than its own waits")
    func moreUrgentWorkWaits() async throws {
        let pool = WorkerPool(threads: 1, name: "test")
        defer { pool.stop() }
        let gate = DispatchSemaphore(value: 0)
        let holder = Task(priority: .low) {
            await pool.perform(cancelled: false) {
                gate.wait()
                return true
            }
        }
        try await until { pool.counts.running == 1 }
        #expect(!pool.hasQueued(above: .low))
        let urgent = Task(priority: .high) { await pool.perform(cancelled: false) { true } }
        try await until { pool.hasQueued(above: .low) }
        #expect(!pool.hasQueued(above: .high))
        gate.signal()
        let (held, ran) = (await holder.value, await urgent.value)
        #expect(held && ran)
        #expect(!pool.hasQueued(above: .background))
    }
}

/// Waits up to 5 s for `condition`, checking every 10 ms.
private func until(_ condition: () -> Bool) async throws {
    for _ in 0..<500 where !condition() {
        try await Task.sleep(for: .milliseconds(10))
    }
    #expect(condition())
}
