import FeedPages
import WarmfeedCore

/// The tasks warming the planner's running jobs, one per page, kept beside the
/// planner under the `Prewarmer`'s one lock.
///
/// A job's task is made outside the lock, after the planner marked the job
/// running. In between, the planner may ask to cancel it, or a quick task may
/// already have ended; so each start gets a serial that every later step
/// names, and a step meant for one start never touches another start of the
/// same page. A cancellation asked before the task exists is kept and carried
/// out when the task is made.
struct PrewarmTasks {
    typealias Job = Prewarmer.Planner.Job

    /// One start of a job, handed to whoever makes its task.
    struct Start: Sendable {
        /// The job to warm.
        var job: Job
        /// Names this start among all starts of the job's page.
        var serial: Int
    }

    private struct Entry {
        var serial: Int
        var task: Task<Void, Never>?
        var cancelAsked = false
    }

    private var entries: [Int: Entry] = [:]
    private var lastSerial = 0

    /// Tasks made and not yet ended, for tests and the shutdown.
    var count: Int { entries.count }

    /// The planner started `job`: its task is to be made.
    mutating func start(_ job: Job) -> Start {
        lastSerial += 1
        entries[job.page] = Entry(serial: lastSerial)
        return Start(job: job, serial: lastSerial)
    }

    /// The task for `start` is made. Returns it when it must be cancelled at
    /// once (asked before it existed); keeps nothing when the job already ended.
    mutating func made(_ task: Task<Void, Never>, for start: Start) -> Task<Void, Never>? {
        guard var entry = entries[start.job.page], entry.serial == start.serial else { return nil }
        entry.task = task
        entries[start.job.page] = entry
        return entry.cancelAsked ? task : nil
    }

    /// The planner asks to cancel the running job on `page`: its task to
    /// cancel, or nil when the task is not made yet (it is cancelled when made).
    mutating func cancel(page: Int) -> Task<Void, Never>? {
        guard var entry = entries[page] else { return nil }
        entry.cancelAsked = true
        entries[page] = entry
        return entry.task
    }

    /// The job of `start` ended (and was reported to the planner).
    mutating func ended(_ start: Start) {
        if entries[start.job.page]?.serial == start.serial { entries[start.job.page] = nil }
    }

    /// Shutting down: every task made, to cancel now; those not made yet are
    /// cancelled when they are.
    mutating func cancelAll() -> [Task<Void, Never>] {
        for page in entries.keys { entries[page]?.cancelAsked = true }
        return entries.values.compactMap(\.task)
    }
}
