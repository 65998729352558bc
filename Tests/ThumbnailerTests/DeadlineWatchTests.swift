import Testing

@testable import Thumbnailer

@Suite("The deadlines of libvips work")
struct DeadlineWatchTests {
    let start = ContinuousClock.now

    @Test("Work is named once its deadline passes, and again at every look until it ends")
    func due() {
        var watch = DeadlineWatch(repeatEvery: .milliseconds(20))
        let (early, earlyDue) = watch.add(deadline: start + .seconds(1), now: start)
        let (late, lateDue) = watch.add(deadline: start + .seconds(5), now: start)
        #expect(!earlyDue && !lateDue && watch.count == 2)
        #expect(watch.nextLook(now: start) == start + .seconds(1))
        #expect(watch.due(now: start + .milliseconds(999)).isEmpty)
        #expect(watch.due(now: start + .seconds(1)) == [early])
        // While it still runs, it is stopped again every 20 ms.
        #expect(watch.nextLook(now: start + .seconds(1)) == start + .milliseconds(1020))
        #expect(watch.due(now: start + .milliseconds(1020)) == [early])
        let earlyExpired = watch.remove(early)
        #expect(earlyExpired, "it went past its deadline")
        #expect(watch.nextLook(now: start + .seconds(2)) == start + .seconds(5))
        let lateExpired = watch.remove(late)
        #expect(!lateExpired, "it ended in time")
        #expect(watch.nextLook(now: start + .seconds(2)) == nil && watch.count == 0)
    }

    @Test("Work whose deadline has passed already is to be stopped at once")
    func pastAlready() {
        var watch = DeadlineWatch()
        let (id, due) = watch.add(deadline: start, now: start + .milliseconds(1))
        let expired = watch.remove(id)
        #expect(due && expired)
    }
}
