import Testing
@testable import OriginFetcher

/// The hand-over between callers and the transfer thread, played out without threads.
@Suite struct FetchQueueTests {
    typealias Queue = FetchQueue<String>

    @Test func aSubmittedFetchStartsRunsAndEnds() {
        var queue = Queue()
        let id = queue.makeID()
        guard case .wakeLoop = queue.submit(id, "a") else { Issue.record("not queued"); return }
        #expect(queue.stats.inFlight == 1 && queue.stats.started == 0)
        let inbox = queue.takeInbox()
        #expect(inbox.start.map(\.work) == ["a"])
        #expect(inbox.start.map(\.id) == [id])
        #expect(inbox.cancel.isEmpty && !inbox.shutDown)
        #expect(queue.stats.started == 1)
        let endedOnce = queue.ended(id, .finished)
        #expect(endedOnce)
        #expect(queue.stats == stats(started: 1, finished: 1))
        let endedTwice = queue.ended(id, .finished)
        #expect(!endedTwice, "a fetch ends once")
        #expect(queue.stats == stats(started: 1, finished: 1))
    }

    @Test func identifiersAreDistinct() {
        var queue = Queue()
        let ids = (0..<100).map { _ in queue.makeID() }
        #expect(Set(ids).count == 100)
    }

    @Test func cancellingAWaitingFetchHandsItBackAtOnce() {
        var queue = Queue()
        let id = queue.makeID()
        _ = queue.submit(id, "a")
        guard case .resume(let work) = queue.cancel(id) else { Issue.record("not handed back"); return }
        #expect(work == "a")
        #expect(queue.takeInbox().start.isEmpty)
        #expect(queue.stats == stats(cancelled: 1))
    }

    @Test func cancellingARunningFetchAsksTheLoopOnce() {
        var queue = Queue()
        let id = queue.makeID()
        _ = queue.submit(id, "a")
        _ = queue.takeInbox()
        guard case .wakeLoop = queue.cancel(id) else { Issue.record("loop not woken"); return }
        guard case .wakeLoop = queue.cancel(id) else { Issue.record("loop not woken"); return }
        #expect(queue.takeInbox().cancel == [id])
        let ended = queue.ended(id, .cancelled)
        #expect(ended)
        #expect(queue.stats == stats(started: 1, cancelled: 1))
        #expect(queue.takeInbox().cancel.isEmpty)
    }

    @Test func aCancellationThatLosesTheRaceToTheEndIsDropped() {
        var queue = Queue()
        let id = queue.makeID()
        _ = queue.submit(id, "a")
        _ = queue.takeInbox()
        _ = queue.cancel(id)
        queue.ended(id, .finished)
        #expect(queue.takeInbox().cancel.isEmpty)
        #expect(queue.stats == stats(started: 1, finished: 1))
        // A cancellation after the end is remembered until the fetch forgets it.
        guard case .none = queue.cancel(id) else { Issue.record("an ended fetch was cancelled"); return }
        #expect(queue.counts.cancelledEarly == 1)
        queue.forget(id)
        #expect(queue.counts.cancelledEarly == 0)
    }

    @Test func aFetchCancelledBeforeItIsSubmittedIsRefused() {
        var queue = Queue()
        let id = queue.makeID()
        guard case .none = queue.cancel(id) else { Issue.record("unexpected action"); return }
        guard case .refuse(let work) = queue.submit(id, "a") else { Issue.record("not refused"); return }
        #expect(work == "a")
        queue.forget(id)
        #expect(queue.stats == stats(cancelled: 1))
        #expect(queue.counts == (0, 0, 0, 0))
        // Another fetch is not affected.
        guard case .wakeLoop = queue.submit(queue.makeID(), "b") else { Issue.record("refused"); return }
    }

    @Test func shutdownDropsWaitingFetchesAndRefusesNewOnes() {
        var queue = Queue()
        let running = queue.makeID()
        _ = queue.submit(running, "running")
        _ = queue.takeInbox()
        let waiting = queue.makeID()
        _ = queue.submit(waiting, "waiting")
        let dropped = queue.shutDown()
        #expect(dropped == ["waiting"])
        let droppedAgain = queue.shutDown()
        #expect(droppedAgain.isEmpty, "idempotent")
        guard case .refuse = queue.submit(queue.makeID(), "late") else { Issue.record("accepted"); return }
        let inbox = queue.takeInbox()
        #expect(inbox.shutDown && inbox.start.isEmpty)
        queue.ended(running, .cancelled)
        #expect(queue.stats == stats(started: 1, cancelled: 3))
    }

    @Test func refusedURLsCountAsFailures() {
        var queue = Queue()
        queue.countRefused()
        #expect(queue.stats == stats(failed: 1))
    }

    private func stats(started: Int = 0, finished: Int = 0, failed: Int = 0, cancelled: Int = 0, inFlight: Int = 0) -> FetcherStats {
        var stats = FetcherStats()
        stats.started = started
        stats.finished = finished
        stats.failed = failed
        stats.cancelled = cancelled
        stats.inFlight = inFlight
        return stats
    }
}
