import Foundation

/// What a `JobThreads` keeps its waiting work in: pure state, only touched
/// under the threads' one lock. The queue decides the order (first in,
/// first out; by priority; a few jobs ahead of the rest).
public protocol JobQueueing {
    associatedtype Job
    /// The next job to run, taken off the queue; nil while there is none.
    mutating func take() -> Job?
}

/// Threads of their own that run blocking work taken from one queue: the one
/// way the process runs blocking work off Swift's cooperative pool (HTTP
/// handlers, libvips, PostgreSQL reads, Redis commands, a store's long jobs).
///
/// On the cooperative pool, which has one thread per core, blocking work
/// would starve every other task in the process; here it runs on threads
/// of its own, and an async caller waits on a continuation without holding
/// a thread. The queue (`JobQueueing`) says which job goes next; each thread
/// may keep state of its own between jobs (a Redis connection). `stop()`
/// lets the threads run out what is queued and end.
public final class JobThreads<Queue: JobQueueing>: @unchecked Sendable {
    // Safe to share: `queue` and `stopping` are only touched with `condition` locked.
    private let condition = NSCondition()
    private var queue: Queue
    private var stopping = false

    /// Threads over `queue`, none started yet (`start`).
    public init(_ queue: Queue) {
        self.queue = queue
    }

    /// Starts `count` threads (at least one), named `name-0`, `name-1`, … (or
    /// `name` itself, when not `numbered`): each makes its `state`, runs each
    /// job it takes with it, and calls `onExit` as it ends. A thread holds
    /// these threads until `stop()` lets it run out.
    public func start<State>(
        threads count: Int, name: String, numbered: Bool = true, state: @escaping @Sendable () -> State,
        run: @escaping @Sendable (Queue.Job, inout State) -> Void, onExit: @escaping @Sendable () -> Void = {}
    ) {
        for index in 0..<max(1, count) {
            let thread = Thread { [self] in
                var own = state()
                while let job = next() { run(job, &own) }
                onExit()
            }
            thread.name = numbered ? "\(name)-\(index)" : name
            thread.start()
        }
    }

    /// `body` on the queue under the lock (`stopping`: `stop()` was called);
    /// `wake`: a thread waiting for work is woken after (a job was queued).
    @inline(__always)
    public func withQueue<Result>(wake: Bool = false, _ body: (inout Queue, _ stopping: Bool) throws -> Result) rethrows -> Result {
        condition.lock()
        defer {
            if wake { condition.signal() }
            condition.unlock()
        }
        return try body(&queue, stopping)
    }

    /// Lets the threads run out the queued jobs and end.
    public func stop() {
        stop { _ in }
    }

    /// `body` on the queue under the same lock that stops the threads (what
    /// it takes off the queue is never run), then lets them run out the rest and end.
    public func stop<Result>(_ body: (inout Queue) -> Result) -> Result {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        stopping = true
        return body(&queue)
    }

    private func next() -> Queue.Job? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let job = queue.take() { return job }
            if stopping { return nil }
            condition.wait()
        }
    }
}

/// First in, first out.
public struct FirstInFirstOut<Job>: JobQueueing {
    private var jobs: [Job] = []
    private var head = 0

    public init() {}

    public var count: Int { jobs.count - head }

    public mutating func append(_ job: Job) { jobs.append(job) }

    public mutating func take() -> Job? {
        guard head < jobs.count else { return nil }
        let job = jobs[head]
        head += 1
        if head == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            head = 0
        }
        return job
    }
}
