/// The bookkeeping of the worker pool, with no threads and no locks: which
/// jobs wait, in what order, how many run, and what a cancellation removes.
///
/// Jobs run highest priority first, oldest first within a priority, so a
/// reader's request (high task priority) overtakes queued pre-warm work (low).
///
/// A job's life: ``reserve()`` hands out a ticket before the job exists (so a
/// cancellation that races with submission is not lost), ``submit(_:ticket:priority:)``
/// queues it, ``start()`` takes it for a worker, ``finish()`` records its end.
/// ``cancel(_:)`` removes a queued job, or marks a reserved ticket so that its
/// submission is refused.
struct JobQueue<Job> {
    /// What happened to a submitted job.
    enum Submission {
        case queued
        /// The ticket was cancelled before the job arrived: the job is handed
        /// back, to be answered as cancelled.
        case refused(Job)
    }

    private struct Bucket {
        var priority: UInt8
        var entries: [(ticket: UInt64, job: Job)] = []
        var head = 0

        var isEmpty: Bool { head == entries.count }
    }

    /// Non-empty buckets, highest priority first.
    private var buckets: [Bucket] = []
    private var reserved: Set<UInt64> = []
    private var cancelledBeforeSubmit: Set<UInt64> = []
    private var raisedBeforeSubmit: [UInt64: UInt8] = [:]
    private var nextTicket: UInt64 = 1

    /// Jobs waiting for a worker.
    private(set) var queued = 0
    /// Jobs on a worker.
    private(set) var running = 0
    /// The most jobs ever on workers at once.
    private(set) var peakRunning = 0

    /// The priority of the most urgent job waiting, nil when none waits.
    var highestQueuedPriority: UInt8? { buckets.first?.priority }

    /// A ticket for a job about to be submitted.
    mutating func reserve() -> UInt64 {
        let ticket = nextTicket
        nextTicket += 1
        reserved.insert(ticket)
        return ticket
    }

    /// Queues a job under its reserved ticket.
    mutating func submit(_ job: Job, ticket: UInt64, priority: UInt8) -> Submission {
        reserved.remove(ticket)
        let priority = max(priority, raisedBeforeSubmit.removeValue(forKey: ticket) ?? 0)
        if cancelledBeforeSubmit.remove(ticket) != nil { return .refused(job) }
        if let index = buckets.firstIndex(where: { $0.priority == priority }) {
            buckets[index].entries.append((ticket, job))
        } else {
            let index = buckets.firstIndex(where: { $0.priority < priority }) ?? buckets.endIndex
            buckets.insert(Bucket(priority: priority, entries: [(ticket, job)]), at: index)
        }
        queued += 1
        return .queued
    }

    /// Moves a waiting job to `priority` when that is higher than its own (a
    /// job not submitted yet is queued there when it is); a running or
    /// finished job is left alone.
    mutating func raise(_ ticket: UInt64, to priority: UInt8) {
        if reserved.contains(ticket) {
            raisedBeforeSubmit[ticket] = max(priority, raisedBeforeSubmit[ticket] ?? 0)
            return
        }
        for index in buckets.indices where buckets[index].priority < priority {
            let bucket = buckets[index]
            guard let position = bucket.entries[bucket.head...].firstIndex(where: { $0.ticket == ticket }) else { continue }
            let job = buckets[index].entries.remove(at: position).job
            if buckets[index].isEmpty { buckets.remove(at: index) }
            queued -= 1
            _ = submit(job, ticket: ticket, priority: priority)
            return
        }
    }

    /// Cancels a ticket: returns its job if it was waiting (now removed), and
    /// nil if it is running, done, or not submitted yet (then its submission
    /// will be refused).
    mutating func cancel(_ ticket: UInt64) -> Job? {
        if reserved.contains(ticket) {
            cancelledBeforeSubmit.insert(ticket)
            return nil
        }
        for index in buckets.indices {
            let bucket = buckets[index]
            guard let position = bucket.entries[bucket.head...].firstIndex(where: { $0.ticket == ticket }) else {
                continue
            }
            let job = buckets[index].entries.remove(at: position).job
            queued -= 1
            if buckets[index].isEmpty { buckets.remove(at: index) }
            return job
        }
        return nil
    }

    /// Takes the next job for a worker, or nil when none waits.
    mutating func start() -> Job? {
        guard !buckets.isEmpty else { return nil }
        let job = buckets[0].entries[buckets[0].head].job
        buckets[0].head += 1
        if buckets[0].isEmpty {
            buckets.removeFirst()
        } else if buckets[0].head >= 64, buckets[0].head * 2 >= buckets[0].entries.count {
            // A bucket that never drains would otherwise keep every job it ever held.
            buckets[0].entries.removeFirst(buckets[0].head)
            buckets[0].head = 0
        }
        queued -= 1
        running += 1
        peakRunning = max(peakRunning, running)
        return job
    }

    /// Records that a started job has ended.
    mutating func finish() {
        precondition(running > 0, "finish() without start()")
        running -= 1
    }
}

extension JobQueue: JobQueueing {
    /// A worker's next job, by priority (`start()`).
    mutating func take() -> Job? { start() }
}
