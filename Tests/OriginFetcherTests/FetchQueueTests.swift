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

    // MARK: Hosts, priorities and the bound on waiting

    @Test func eachHostGetsAtMostItsCapAndAnEndFreesAPlace() {
        var queue = Queue(maxPerHost: 2)
        let ids = (0..<5).map { _ in queue.makeID() }
        for (index, id) in ids.enumerated() { _ = queue.submit(id, "a\(index)", host: "http://a") }
        let other = queue.makeID()
        _ = queue.submit(other, "b0", host: "http://b")
        let first = queue.takeInbox()
        #expect(Set(first.start.map(\.work)) == ["a0", "a1", "b0"])
        #expect(queue.counts.waiting == 3 && !queue.canStartMore)
        #expect(queue.takeInbox().start.isEmpty, "no place is free")
        queue.ended(ids[0], .finished)
        #expect(queue.canStartMore)
        #expect(queue.takeInbox().start.map(\.work) == ["a2"])
    }

    @Test func theTotalCapIsSharedAmongHostsInTurnAndAnEndFreesAPlace() {
        var queue = Queue(maxPerHost: 4, maxTotal: 3)
        var ids: [String: [UInt64]] = [:]
        for host in ["a", "b"] {
            for index in 0..<4 {
                let id = queue.makeID()
                ids[host, default: []].append(id)
                _ = queue.submit(id, "\(host)\(index)", host: host)
            }
        }
        let first = queue.takeInbox().start.map(\.work)
        #expect(first.count == 3, "\(first)")
        // One host does not take every free place while the other waits.
        #expect(first.contains { $0.hasPrefix("a") } && first.contains { $0.hasPrefix("b") }, "\(first)")
        #expect(!queue.canStartMore)
        #expect(queue.takeInbox().start.isEmpty, "no place is free in all")
        let ended = ids["a"]![0]
        queue.ended(ended, .finished)
        #expect(queue.canStartMore)
        #expect(queue.takeInbox().start.count == 1)
        #expect(queue.counts.running == 3 && queue.counts.waiting == 4)
    }

    @Test func urgentFetchesStartBeforeTheHostsOthers() {
        var queue = Queue(maxPerHost: 1)
        let busy = queue.makeID()
        _ = queue.submit(busy, "running", host: "h")
        _ = queue.takeInbox()
        for (name, urgent) in [("later1", false), ("later2", false), ("reader", true)] {
            _ = queue.submit(queue.makeID(), name, host: "h", urgent: urgent)
        }
        queue.ended(busy, .finished)
        #expect(queue.takeInbox().start.map(\.work) == ["reader"])
    }

    @Test func aPromotedFetchStartsBeforeTheOtherNonUrgentOnesAfterTheUrgentOnes() {
        var queue = Queue(maxPerHost: 1)
        let busy = queue.makeID()
        _ = queue.submit(busy, "running", host: "h")
        _ = queue.takeInbox()
        for (name, urgent) in [("later1", false), ("joined", false), ("reader", true)] {
            _ = queue.submit(queue.makeID(), name, host: "h", urgent: urgent)
        }
        #expect(queue.promote { $0 == "joined" } == 1)
        #expect(queue.promote { $0 == "running" } == 0, "a running fetch is not waiting")
        var order: [String] = []
        var last = busy
        for _ in 0..<3 {
            queue.ended(last, .finished)
            let started = queue.takeInbox().start
            order += started.map(\.work)
            last = started.first?.id ?? last
        }
        #expect(order == ["reader", "joined", "later1"])
    }

    @Test func aFetchThatWaitsTooLongEndsBusyAndNeverStarts() {
        let start = ContinuousClock.now
        var queue = Queue(maxPerHost: 1, maxWait: .seconds(30))
        let running = queue.makeID()
        _ = queue.submit(running, "running", host: "h", now: start)
        _ = queue.takeInbox(now: start)
        _ = queue.submit(queue.makeID(), "old", host: "h", now: start)
        _ = queue.submit(queue.makeID(), "young", host: "h", now: start + .seconds(20))
        #expect(queue.takeInbox(now: start + .seconds(29)).expired.isEmpty)
        let inbox = queue.takeInbox(now: start + .seconds(31))
        #expect(inbox.expired == ["old"] && inbox.start.isEmpty)
        #expect(queue.stats.busy == 1 && queue.stats.inFlight == 2 && queue.counts.waiting == 1)
        queue.ended(running, .finished)
        #expect(queue.takeInbox(now: start + .seconds(32)).start.map(\.work) == ["young"])
    }

    @Test func shuttingDownHandsBackEveryWaitingFetchOfEveryHost() {
        var queue = Queue(maxPerHost: 1)
        for host in ["a", "a", "b", "b"] { _ = queue.submit(queue.makeID(), host, host: host) }
        _ = queue.takeInbox()
        #expect(queue.shutDown().sorted() == ["a", "b"])
        #expect(queue.counts.waiting == 0 && queue.counts.running == 2)
    }

    @Test func theHostIsSchemeHostAndPort() {
        #expect(OriginURL.host(of: "http://Img.Example:8080/a/b.jpg?x=1") == "http://img.example:8080")
        #expect(OriginURL.host(of: "https://cdn.example") == "https://cdn.example")
        #expect(OriginURL.host(of: "file:///srv/pictures/a.png") == "file://")
    }
}
