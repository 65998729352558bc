import Testing

@testable import Thumbnails

/// Pre-warm makes 2x thumbnails and AVIF only while readers who use them are
/// about: one window, ten minutes after the last ask, for both.
@Suite struct DemandWindowTests {
    @Test func aDemandLastsTenMinutesAfterTheLastAskAndNeverMovesBack() {
        let window = DemandWindow()
        #expect(!window.isOpen(at: 0), "no reader yet: 1x and WebP only")
        window.note(at: 20.7)
        #expect(window.isOpen(at: 30))
        #expect(window.isOpen(at: 619.9))
        #expect(!window.isOpen(at: 620.5))
        // A stamp from a thread whose clock read came late does not move the window back.
        window.note(at: 10)
        #expect(window.isOpen(at: 619.9))
        window.note(at: 700)
        #expect(window.isOpen(at: 1_299) && !window.isOpen(at: 1_300))
    }

    @Test func manyThreadsNotingAtOnceLeaveTheLatestSecond() async {
        let window = DemandWindow()
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<8 {
                group.addTask { for second in 0..<1_000 { window.note(at: Double(second * 8 + thread)) } }
            }
        }
        #expect(window.isOpen(at: 7_999 + 599.5))
    }
}
