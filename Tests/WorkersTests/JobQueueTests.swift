import Testing

@testable import Workers

@Suite("Job queue bookkeeping")
struct JobQueueTests {
    @Test("Higher priority first, oldest first within a priority")
    func order() {
        var queue = JobQueue<String>()
        for (name, priority) in [("low-1", 9), ("high-1", 25), ("low-2", 9), ("mid", 17), ("high-2", 25)] {
            let ticket = queue.reserve()
            guard case .queued = queue.submit(name, ticket: ticket, priority: UInt8(priority)) else {
                Issue.record("refused \(name)")
                return
            }
        }
        #expect(queue.queued == 5)
        var started: [String] = []
        var highest: [UInt8?] = []
        while let job = queue.start() {
            started.append(job)
            highest.append(queue.highestQueuedPriority)
        }
        #expect(started == ["high-1", "high-2", "mid", "low-1", "low-2"])
        #expect(highest == [25, 17, 9, 9, nil])
        #expect(queue.running == 5 && queue.peakRunning == 5 && queue.queued == 0)
    }

    @Test("A raised job moves up to its new priority, after the jobs already there; lowering is ignored")
    func raise() {
        var queue = JobQueue<String>()
        var tickets: [String: UInt64] = [:]
        for (name, priority) in [("prewarm-1", 9), ("prewarm-2", 9), ("reader-1", 25)] {
            tickets[name] = queue.reserve()
            _ = queue.submit(name, ticket: tickets[name]!, priority: UInt8(priority))
        }
        let late = queue.reserve()
        queue.raise(late, to: 25)  // raised before it was even submitted
        _ = queue.submit("prewarm-late", ticket: late, priority: 9)
        queue.raise(tickets["prewarm-2"]!, to: 25)
        queue.raise(tickets["reader-1"]!, to: 9)
        #expect(queue.queued == 4)
        var started: [String] = []
        while let job = queue.start() { started.append(job) }
        #expect(started == ["reader-1", "prewarm-late", "prewarm-2", "prewarm-1"])
    }

    @Test("Cancelling a queued job removes it; a running or finished one is left alone")
    func cancelQueued() {
        var queue = JobQueue<String>()
        let first = queue.reserve()
        _ = queue.submit("first", ticket: first, priority: 0)
        let second = queue.reserve()
        _ = queue.submit("second", ticket: second, priority: 0)
        #expect(queue.start() == "first")
        #expect(queue.cancel(first) == nil)
        #expect(queue.cancel(second) == "second")
        #expect(queue.queued == 0)
        #expect(queue.start() == nil)
        queue.finish()
        #expect(queue.running == 0 && queue.peakRunning == 1)
        #expect(queue.cancel(second) == nil)
    }

    @Test("A cancellation that arrives before the job is refused on submission")
    func cancelBeforeSubmit() {
        var queue = JobQueue<String>()
        let ticket = queue.reserve()
        #expect(queue.cancel(ticket) == nil)
        guard case .refused(let job) = queue.submit("late", ticket: ticket, priority: 0) else {
            Issue.record("a cancelled ticket was queued")
            return
        }
        #expect(job == "late")
        #expect(queue.queued == 0 && queue.start() == nil)
        // The ticket is forgotten: its number never comes back, nothing leaks.
        let next = queue.reserve()
        #expect(next != ticket)
        guard case .queued = queue.submit("next", ticket: next, priority: 0) else {
            Issue.record("refused")
            return
        }
    }

    @Test("A queue that never drains keeps FIFO order over many jobs")
    func longRunning() {
        var queue = JobQueue<Int>()
        var started: [Int] = []
        for job in 0..<500 {
            let ticket = queue.reserve()
            _ = queue.submit(job, ticket: ticket, priority: 1)
            if job % 2 == 1, let next = queue.start() {
                started.append(next)
                queue.finish()
            }
        }
        while let next = queue.start() {
            started.append(next)
            queue.finish()
        }
        #expect(started == Array(0..<500))
        #expect(queue.peakRunning == 1)
    }
}
