import FeedPages
import Foundation
import Synchronization
import Testing

@testable import Prewarm
@testable import WarmfeedCore

/// Readers' views recorded on many threads while pre-warm drains them: no
/// reader is lost, each reader's views arrive in the order it made them, and
/// the counts add up (issue 35).
@Suite struct ReaderViewsTests {
    @Test func readerIDsRoundTrip() {
        func number(_ id: String) -> UInt64? {
            var id = id
            return id.withUTF8 { ReaderCookie.number($0) }
        }
        for id in ["0000000000000000", "00000000c0ffee00", "ffffffffffffffff", "0123456789abcdef"] {
            #expect(number(id).map(ReaderCookie.text) == id)
        }
        for bad in ["", "c0ffee", "0123456789abcdefa", "0123456789abcdeg", "0123456789ABCDEF", "+123456789abcdef"] { #expect(number(bad) == nil) }
    }

    @Test func manyThreadsRecordingReadersWhilePrewarmDrains() async throws {
        // Rings large enough for every view even if every thread shared one and the
        // drainer never ran in between (threads that end give their numbers to the next):
        // what this test asks is that nothing taken is lost or reordered.
        let views = ReaderViews(capacity: 16_384, slots: 8)
        let threads = 8
        let readersPerThread = 50
        let pages = 40
        let shared = Drained()
        let drainer = Task.detached {
            func take() {
                let drained = views.drain()
                shared.seen.withLock { seen in
                    for view in drained {
                        if let last = seen[view.reader], view.number <= last { shared.disordered.add(1, ordering: .relaxed) }
                        seen[view.reader] = view.number
                    }
                }
            }
            while !shared.stop.load(ordering: .acquiring) {
                take()
                try? await Task.sleep(for: .milliseconds(1))
            }
            take()
        }
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<threads {
                group.addTask {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        Thread {
                            // Each reader reads page after page, as a reader scrolls.
                            for page in 1...pages {
                                for reader in 0..<readersPerThread {
                                    let id = UInt64(thread * 1_000 + reader)
                                    views.record(ReaderView(reader: id, number: page, target: nil, older: nil, newer: nil, revision: 1, scale: 2))
                                }
                            }
                            continuation.resume()
                        }.start()
                    }
                }
            }
        }
        shared.stop.store(true, ordering: .releasing)
        await drainer.value
        let totals = views.totals
        #expect(totals.dropped == 0)
        #expect(totals.recorded == threads * readersPerThread * pages && totals.drained == totals.recorded, "\(totals)")
        let final = shared.seen.withLock { $0 }
        #expect(final.count == threads * readersPerThread, "no reader lost")
        #expect(final.values.allSatisfy { $0 == pages }, "each reader's last view is its last page")
        #expect(shared.disordered.load(ordering: .relaxed) == 0)
    }
}

/// What the drainer saw, shared with the test.
final class Drained: Sendable {
    let stop = Atomic<Bool>(false)
    let seen = Mutex<[UInt64: Int]>([:])
    let disordered = Atomic<Int>(0)
}
