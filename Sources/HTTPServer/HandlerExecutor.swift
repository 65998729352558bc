import Workers

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
final class HandlerExecutor: TaskExecutor, Sendable {
    private let thread = JobThreads(FirstInFirstOut<UnownedJob>())

    init(name: String) {
        // The thread holds the executor until `stop()` lets it run out.
        thread.start(threads: 1, name: name, numbered: false, state: {}) { [self] job, _ in
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        thread.withQueue(wake: true) { jobs, _ in jobs.append(job) }
    }

    /// Lets the thread finish the queued jobs and exit.
    func stop() {
        thread.stop()
    }
}
