/// Dedicated threads that run blocking work for async callers, by the
/// callers' priorities: libvips calls (the thumbnailer), PostgreSQL reads on
/// libpq (the PostgreSQL store). `JobThreads` over a `JobQueue`.
///
/// A thumbnail takes tens of milliseconds of CPU. On Swift's cooperative pool,
/// which has one thread per core, that work would starve every other task in
/// the process; here it runs on at most `threads` threads of its own, and the
/// async caller waits on a continuation without holding a thread.
public final class WorkerPool: Sendable {
    /// A unit of work and what to do instead if it is cancelled while queued.
    /// Exactly one of the two closures is called; `run` records its own end
    /// (``JobQueue/finish()``) before it answers its caller, so a caller that
    /// reads ``counts`` after its answer never sees its own job still running.
    private struct Job {
        var run: @Sendable () -> Void
        var cancel: @Sendable () -> Void
    }

    private let threads = JobThreads(JobQueue<Job>())

    /// Starts `threads` threads (at least one), named `name-0`, `name-1`, …;
    /// each calls `onThreadExit` as it ends.
    public init(threads count: Int, name: String, onThreadExit: @escaping @Sendable () -> Void = {}) {
        threads.start(threads: count, name: name, state: {}, run: { job, _ in job.run() }, onExit: onThreadExit)
    }

    /// Runs `work` on a pool thread and returns its result. If the calling task
    /// is cancelled while the work is still queued, the work is dropped and
    /// `cancelled` is returned at once; work already running is finished.
    ///
    /// Queued work runs in the order of the callers' task priorities; a
    /// caller whose priority is escalated while its work waits (a task of
    /// higher priority awaits it) moves its work up.
    public func perform<T: Sendable>(cancelled: T, _ work: @escaping @Sendable () -> T) async -> T {
        let ticket = threads.withQueue { queue, _ in queue.reserve() }
        let priority = Task.currentPriority.rawValue
        return await withTaskCancellationHandler {
            await withTaskPriorityEscalationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
                    submit(
                        Job(
                            run: { [self] in
                                let result = work()
                                threads.withQueue { queue, _ in queue.finish() }
                                continuation.resume(returning: result)
                            },
                            cancel: { continuation.resume(returning: cancelled) }),
                        ticket: ticket, priority: priority)
                }
            } onPriorityEscalated: { _, raised in
                // Someone of higher priority now waits on this work (a reader on pre-warm's
                // thumbnail): if it still waits for a worker, it moves up the queue.
                threads.withQueue { queue, _ in queue.raise(ticket, to: raised.rawValue) }
            }
        } onCancel: {
            let removed = threads.withQueue { queue, _ in queue.cancel(ticket) }
            removed?.cancel()
        }
    }

    /// Waiting and running job counts, and the most that ever ran at once.
    public var counts: (queued: Int, running: Int, peakRunning: Int) {
        threads.withQueue { queue, _ in (queue.queued, queue.running, queue.peakRunning) }
    }

    /// Whether a job of a priority above `priority` waits for a worker: a long
    /// job of lower priority asks between its steps, to end sooner.
    public func hasQueued(above priority: TaskPriority) -> Bool {
        threads.withQueue { queue, _ in (queue.highestQueuedPriority ?? 0) > priority.rawValue }
    }

    /// Lets the threads finish the queued jobs and exit.
    public func stop() {
        threads.stop()
    }

    private func submit(_ job: Job, ticket: UInt64, priority: UInt8) {
        let submission: JobQueue<Job>.Submission = threads.withQueue(wake: true) { queue, stopping in
            // After stop() no thread would take the job; answer it as cancelled.
            stopping ? .refused(job) : queue.submit(job, ticket: ticket, priority: priority)
        }
        if case .refused(let job) = submission { job.cancel() }
    }
}

extension WorkerPool {
    /// Threads for the process's rare, long blocking jobs (a store's write
    /// transaction, an import that parses a feed as it writes it), so none of
    /// them holds a thread of Swift's cooperative pool. Made on first use;
    /// its threads wait idle between jobs and end with the process. Eight:
    /// more than the writes a store lets run at once (SQLite has one writer,
    /// PostgreSQL's writes take one advisory lock), so a queued job waits for
    /// the store, never for a thread.
    public static let longJobs = WorkerPool(threads: 8, name: "warmfeed-long")
}
