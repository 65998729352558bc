import Testing

@testable import FeedIngest

/// `GroupWriter.Window`, the pure part of writing polls together: one write
/// at a time, a window opened by the first part, full or hurried windows
/// written at once, and a window that ended late ignored.
@Suite struct GroupWriterWindowTests {
    @Test func theFirstPartOpensAWindowAndTheOthersJoinIt() {
        var window = GroupWriter.Window(fullAt: 3)
        #expect(window.added() == .writeAfter(token: 1))
        #expect(window.added() == .none)
        #expect(window.windowEnded(1) == .writeNow)
        // Parts coming while the write runs wait for it; then their own window opens.
        #expect(window.added() == .none)
        #expect(window.wrote(2) == .writeAfter(token: 2))
        #expect(window.windowEnded(2) == .writeNow)
        #expect(window.wrote(1) == .none)
        #expect(window.waiting == 0)
    }

    @Test func aFullWindowIsWrittenAtOnceAndItsTimerIsOver() {
        var window = GroupWriter.Window(fullAt: 3)
        #expect(window.added() == .writeAfter(token: 1))
        #expect(window.added() == .none)
        #expect(window.added() == .writeNow)
        #expect(window.windowEnded(1) == .none, "the window was written when full")
        #expect(window.wrote(3) == .none)
    }

    @Test func inAHurryEachWriteFollowsTheLastWithNoWindow() {
        var window = GroupWriter.Window(fullAt: 64)
        #expect(window.hurried(true) == .none)
        #expect(window.added() == .writeNow)
        #expect(window.added() == .none, "one write at a time")
        #expect(window.added() == .none)
        #expect(window.wrote(1) == .writeNow, "the two that came meanwhile, together")
        #expect(window.wrote(2) == .none)
        // The hurry ends with parts waiting in an open window: nothing changes for them.
        #expect(window.hurried(false) == .none)
        #expect(window.added() == .writeAfter(token: 1))
        #expect(window.hurried(true) == .writeNow, "a hurry writes what waits")
        #expect(window.windowEnded(1) == .none)
    }

    @Test func anUrgedWindowIsWrittenNowAndSoIsWhatComesWhileItIsWritten() {
        var window = GroupWriter.Window(fullAt: 64)
        #expect(window.urged() == .none, "nothing waits")
        #expect(window.added() == .writeAfter(token: 1))
        #expect(window.urged() == .writeNow)
        #expect(window.added() == .none)
        #expect(window.urged() == .none, "one write at a time")
        #expect(window.wrote(1) == .writeNow, "still urgent: one waits")
        #expect(window.wrote(1) == .none)
        #expect(window.added() == .writeAfter(token: 2), "nothing waited: windows again")
    }
}
