import Foundation
import Synchronization
import Testing

@testable import Thumbnailer

@Suite("The worker pool")
struct ConcurrencyTests {
    @Test("20 thumbnails at once on 2 workers all succeed, never more than 2 running")
    func boundedPool() async throws {
        let thumbnailer = Thumbnailer(workers: 2)
        let sources = [
            try await Fixtures.shared.original(.jpeg),
            try await Fixtures.shared.original(.png),
            try await Fixtures.shared.original(.webp),
        ]
        let sizes = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for index in 0..<20 {
                let (width, height) = index % 2 == 0 ? (240, 180) : (480, 360)
                group.addTask {
                    let thumbnail = try await thumbnailer.thumbnail(
                        of: sources[index % 3], width: width, height: height, format: index % 4 < 2 ? .webp : .jpeg)
                    return (thumbnail.width, thumbnail.height)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(sizes.count == 20)
        #expect(sizes.filter { $0 == (240, 180) }.count == 10)
        let stats = thumbnailer.stats
        #expect(stats.made == 20 && stats.failed == 0)
        #expect(stats.queued == 0 && stats.running == 0)
        #expect((1...2).contains(stats.peakRunning), "peak \(stats.peakRunning)")
    }

    @Test("A job whose caller is cancelled while it waits is dropped")
    func cancelWhileQueued() async throws {
        let thumbnailer = Thumbnailer(workers: 1)
        let original = try await Fixtures.shared.original(.jpeg)
        let gate = Gate()
        let blocker = Task { await thumbnailer.perform(cost: 0, refused: (), cancelled: ()) { gate.wait() } }
        let waiting = Task {
            try await thumbnailer.thumbnail(of: original, width: 240, height: 180, format: .jpeg)
        }
        try await until { thumbnailer.stats.queued == 1 && thumbnailer.stats.running == 1 }
        waiting.cancel()
        await #expect(throws: ThumbnailError.cancelled) { try await waiting.value }
        #expect(thumbnailer.stats.queued == 0)
        gate.open()
        await blocker.value
        #expect(thumbnailer.stats.cancelled == 1 && thumbnailer.stats.made == 0)
        // The pool still works.
        _ = try await thumbnailer.thumbnail(of: original, width: 240, height: 180, format: .jpeg)
    }

    @Test("A high-priority request overtakes queued low-priority work")
    func priority() async throws {
        let thumbnailer = Thumbnailer(workers: 1)
        let gate = Gate()
        let order = Recorder()
        let blocker = Task { await thumbnailer.perform(cost: 0, refused: (), cancelled: ()) { gate.wait() } }
        try await until { thumbnailer.stats.running == 1 }
        let low = Task(priority: .low) {
            await thumbnailer.perform(cost: 0, refused: (), cancelled: ()) { order.append("low") }
        }
        try await until { thumbnailer.stats.queued == 1 }
        let high = Task(priority: .high) {
            await thumbnailer.perform(cost: 0, refused: (), cancelled: ()) { order.append("high") }
        }
        try await until { thumbnailer.stats.queued == 2 }
        gate.open()
        _ = await (blocker.value, low.value, high.value)
        #expect(order.names == ["high", "low"])
    }

    /// Waits (politely) until `condition` holds; fails after 10 s.
    private func until(_ condition: () -> Bool) async throws {
        for _ in 0..<2000 {
            if condition() { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("condition never held")
    }
}

/// Blocks a worker thread until opened.
final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    func wait() { semaphore.wait() }
    func open() { semaphore.signal() }
}

/// Names appended from worker threads.
final class Recorder: Sendable {
    private let storage = Mutex<[String]>([])
    func append(_ name: String) { storage.withLock { $0.append(name) } }
    var names: [String] { storage.withLock { $0 } }
}

/// libvips 8.14 compiles a small vector program (liborc) for each resize
/// operation and frees it when the operation goes; liborc 0.4.33 does not
/// survive that from several threads at once, and a server under load
/// crashed in liborc once in about 50,000 thumbnails (bench/mixed.sh). The
/// thumbnailer turns libvips' vector path off. Many small resizes on more
/// workers than cores, so the threads interleave as much as they can.
@Suite("Many resizes at once")
struct ManyResizesTests {
    @Test("6,000 small thumbnails on 4 workers: every one made, the process still here")
    func manySmallResizes() async throws {
        let thumbnailer = Thumbnailer(workers: 4)
        let original = try await thumbnailer.original(width: 320, height: 240, seed: 3, format: .jpeg)
        let count = Int(ProcessInfo.processInfo.environment["WARMFEED_RESIZES"] ?? "") ?? 6_000
        let made = try await withThrowingTaskGroup(of: Int.self) { group in
            for lane in 0..<8 {
                group.addTask {
                    var made = 0
                    for index in stride(from: lane, to: count, by: 8) {
                        // Odd sizes: a reduce (not a plain shrink) in both directions.
                        let width = 37 + index % 151
                        _ = try await thumbnailer.thumbnail(of: original, width: width, height: width * 3 / 4, format: .jpeg)
                        made += 1
                    }
                    return made
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(made == count)
        #expect(thumbnailer.stats.failed == 0)
    }
}
