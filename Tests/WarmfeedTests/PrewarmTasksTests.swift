import Testing

@testable import FeedPages
@testable import Prewarm
@testable import Warmfeed
@testable import WarmfeedCore

/// The races between a job's start, its task being made, a cancellation and
/// the job's end, played out by hand.
@Suite struct PrewarmTasksTests {
    typealias Job = PrewarmTasks.Job

    func job(_ page: Int) -> Job {
        Job(page: page, target: PageQuery(request: .number(page), number: page))
    }

    /// A task that does nothing; only its handle matters here.
    func idle() -> Task<Void, Never> { Task {} }

    @Test func aCancelAskedBeforeTheTaskIsMadeIsDoneWhenItIsMade() {
        var tasks = PrewarmTasks()
        let start = tasks.start(job(2))
        #expect(tasks.cancel(page: 2) == nil)
        let task = idle()
        #expect(tasks.made(task, for: start) == task)
    }

    @Test func aCancelAfterTheTaskIsMadeReturnsIt() {
        var tasks = PrewarmTasks()
        let start = tasks.start(job(2))
        let task = idle()
        #expect(tasks.made(task, for: start) == nil)
        #expect(tasks.cancel(page: 2) == task)
        tasks.ended(start)
        #expect(tasks.count == 0)
        #expect(tasks.cancel(page: 2) == nil)
    }

    @Test func aTaskThatEndedBeforeItWasMadeLeavesNothing() {
        var tasks = PrewarmTasks()
        let start = tasks.start(job(2))
        tasks.ended(start)
        #expect(tasks.made(idle(), for: start) == nil)
        #expect(tasks.count == 0)
    }

    @Test func anOldStartOfAPageDoesNotTouchTheNewOne() {
        var tasks = PrewarmTasks()
        let old = tasks.start(job(2))
        tasks.ended(old)
        let new = tasks.start(job(2))
        // The old start's task is made late: it must not take the new one's place.
        #expect(tasks.made(idle(), for: old) == nil)
        let task = idle()
        #expect(tasks.made(task, for: new) == nil)
        tasks.ended(old)
        #expect(tasks.cancel(page: 2) == task)
    }

    @Test func shutdownCancelsTasksMadeAndThoseStillToBeMade() {
        var tasks = PrewarmTasks()
        let made = tasks.start(job(2))
        let pending = tasks.start(job(3))
        let task = idle()
        _ = tasks.made(task, for: made)
        #expect(tasks.cancelAll() == [task])
        let late = idle()
        #expect(tasks.made(late, for: pending) == late)
    }
}
