import Foundation

/// One thread that runs `.later` handlers.
///
/// Handlers do short blocking work (a store read, a render); on Swift's shared
/// cooperative pool, which has one thread per core, that work would compete
/// with, and could be starved by, anything else the process runs there. The
/// server's own threads keep request handling independent of the rest.
///
/// The server makes one executor per handler thread, and each worker hands
/// its work to its own share of them (`WorkerShard.nextHandler`): one queue
/// for all handler threads was a lock every worker and every resuming
/// continuation took.
final class HandlerExecutor: TaskExecutor, @unchecked Sendable {
    // Safe to share: `jobs`, `head` and `stopping` are only touched under `condition`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var head = 0
    private var stopping = false

    init(name: String) {
        // The thread holds the executor until `stop()` lets it run out.
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Lets the thread finish the queued jobs and exit.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while head == jobs.count, !stopping { condition.wait() }
            if head == jobs.count {
                condition.unlock()
                return
            }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
