import DequeModule
import Foundation
import Reckoning
import Synchronization
import Workers

/// A small pool of hiredis connections on threads of their own, for async callers.
///
/// hiredis is blocking: each of `connections` threads owns one context and
/// runs one command at a time, so a slow Redis holds those threads, never
/// Swift's cooperative pool. Every command is bounded: at most `timeout` to
/// connect (and as much to authenticate), at most `timeout` for the whole
/// exchange on the wire however Redis paces its bytes, at most `limits` in
/// its reply, and at most `timeout` waiting for a free connection (then `.busy`). A broken connection is freed and made
/// again on the next command; while Redis cannot be reached, commands fail at
/// once (`.down`) and one probe per back-off period tries again.
public final class RedisClient: Sendable {
    /// What the client has seen, for the admin view.
    public struct Status: Sendable {
        public var location: String
        public var up: Bool
        /// Tries that failed in a row while Redis is unreachable: the one that
        /// called it down, then one for each probe (one per back-off).
        public var failedTries: Int
        public var commands: Int
        public var errors: Int
        /// Commands answered `.busy`: they found every connection taken for
        /// longer than the timeout (or the queue full). Redis answered every
        /// command it was given; this client had more to ask than it could send.
        public var busy: Int
        public var lastError: String?
    }

    private struct Job {
        var arguments: [[UInt8]]
        var queuedAt: ContinuousClock.Instant
        var answer: @Sendable (Result<RedisValue, RedisError>) -> Void
    }

    /// The commands waiting for a connection's thread, and what the threads
    /// saw, under the threads' one lock.
    private struct Shared: JobQueueing {
        var queue = Deque<Job>()
        var health = RedisHealth()
        var commands = 0
        var errors = 0
        var busy = 0
        var lastError: String?

        mutating func take() -> Job? { queue.popFirst() }
    }

    public let location: RedisLocation
    public let timeout: Duration
    /// What one reply may hold; a larger one fails its command (`.tooLarge`).
    public let limits: RedisReplyLimits
    /// A thread per connection, each keeping its own.
    private let threads: JobThreads<Shared>
    private let started = ContinuousClock.now
    private let maxQueued: Int

    /// Starts `connections` threads for `location`; connections are made on first use.
    /// `firstBackOff` is how long Redis is left alone after a first failure (it doubles, up to 5 s or more).
    public init(
        _ location: RedisLocation, connections: Int = 4, timeout: Duration = .milliseconds(250), firstBackOff: Duration = .milliseconds(250),
        limits: RedisReplyLimits = RedisReplyLimits()
    ) {
        self.location = location
        self.timeout = timeout
        self.limits = limits
        let firstBackOff = Self.seconds(firstBackOff)
        threads = JobThreads(Shared(health: RedisHealth(firstBackOff: firstBackOff, longestBackOff: max(5, firstBackOff))))
        maxQueued = 64 * max(1, connections)
        threads.start(threads: connections, name: "redis", state: { RedisConnection?.none }) { [self] job, connection in
            run(job, on: &connection)
        }
    }

    /// Runs one command (its words as text) and returns the reply.
    public func run(_ words: String...) async throws(RedisError) -> RedisValue {
        try await run(words.map { Array($0.utf8) })
    }

    /// Runs one command (its arguments as bytes) and returns the reply.
    /// `ahead`: the command goes before every one queued and is never refused
    /// for a full queue, for the few that must not wait behind the many (a
    /// claim's renewal, which lapses if it waits too long behind polls).
    public func run(_ arguments: [[UInt8]], ahead: Bool = false) async throws(RedisError) -> RedisValue {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<RedisValue, RedisError>, Never>) in
            submit(arguments, ahead: ahead) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// `run(_:ahead:)` for a thread of the caller's own, which waits for the
    /// reply (never call it from Swift's cooperative pool): work that must not
    /// wait behind the pool's queue on a busy process (renewing claims).
    public func runWaiting(_ arguments: [[UInt8]], ahead: Bool = false) throws(RedisError) -> RedisValue {
        let answered = DispatchSemaphore(value: 0)
        let reply = Mutex<Result<RedisValue, RedisError>?>(nil)
        submit(arguments, ahead: ahead) { result in
            reply.withLock { $0 = result }
            answered.signal()
        }
        answered.wait()
        return try reply.withLock { $0! }.get()
    }

    /// Queues a command (ahead of the others when `ahead`), or answers at once when it cannot go.
    private func submit(_ arguments: [[UInt8]], ahead: Bool, answer: @escaping @Sendable (Result<RedisValue, RedisError>) -> Void) {
        let job = Job(arguments: arguments, queuedAt: .now, answer: answer)
        let now = seconds()
        let refused: RedisError? = threads.withQueue(wake: true) { shared, stopping in
            if stopping { return .closed }
            // Whether a probe could go now (checked on a copy, without taking the probe's turn).
            var health = shared.health
            if !shared.health.isUp, shared.health.downSince != nil, !health.mayTry(now: now) { return .down }
            if ahead {
                shared.queue.prepend(job)
                return nil
            }
            if shared.queue.count >= maxQueued {
                shared.busy += 1
                return .busy
            }
            shared.queue.append(job)
            return nil
        }
        if let refused { job.answer(.failure(refused)) }
    }

    /// Tries that failed since Redis went down (0 while up), as `status`
    /// gives it, without making the rest: a claim asks on each retry.
    public var failedTries: Int {
        threads.withQueue { shared, _ in shared.health.failedTries }
    }

    public var status: Status {
        threads.withQueue { shared, _ in
            Status(
                location: location.description, up: shared.health.isUp, failedTries: shared.health.failedTries,
                commands: shared.commands, errors: shared.errors, busy: shared.busy, lastError: shared.lastError
            )
        }
    }

    /// Answers what is queued with `.closed` and lets the threads end.
    public func close() {
        let dropped: [Job] = threads.stop { shared in
            let jobs = Array(shared.queue)
            shared.queue.removeAll()
            return jobs
        }
        for job in dropped { job.answer(.failure(.closed)) }
    }

    private func seconds() -> Double {
        Self.seconds(ContinuousClock.now - started)
    }

    private static func seconds(_ duration: Duration) -> Double {
        duration.inSeconds
    }

    // MARK: The threads

    /// `arguments` sent on `connection`, made first when there is none, and
    /// let go of when it broke.
    private func send(_ arguments: [[UInt8]], on connection: inout RedisConnection?) -> Result<RedisValue, RedisError> {
        let result: Result<RedisValue, RedisError>
        do throws(RedisError) {
            if connection == nil { connection = try RedisConnection(location, timeout: timeout, limits: limits) }
            result = .success(try connection!.run(arguments, deadline: .now + timeout))
        } catch {
            result = .failure(error)
        }
        if connection?.isBroken == true { connection = nil }
        return result
    }

    /// Runs one command on this thread's `connection` (made again after it broke).
    private func run(_ job: Job, on connection: inout RedisConnection?) {
        guard ContinuousClock.now - job.queuedAt <= timeout else {
            threads.withQueue { shared, _ in shared.busy += 1 }
            job.answer(.failure(.busy))
            return
        }
        let now = seconds()
        guard threads.withQueue({ shared, _ in shared.health.mayTry(now: now) }) else {
            job.answer(.failure(.down))
            return
        }
        let kept = connection != nil
        var result = send(job.arguments, on: &connection)
        // A kept connection Redis closed while it sat idle (Redis restarted, or its
        // `timeout` ended it) fails at once: the command goes again on a new one
        // before Redis is called down, as a browser does with a kept-alive
        // connection. Without it, every thread's old connection called a Redis
        // that had just come back down again, for a back-off each.
        if kept, case .failure(.connection) = result {
            connection = nil
            result = send(job.arguments, on: &connection)
        }
        let ended = seconds()
        threads.withQueue { shared, _ in
            shared.commands += 1
            switch result {
            case .success: shared.health.succeeded()
            case .failure(.reply(let message)):
                // Redis answered: it is up; the command was wrong (or Redis is out of memory).
                shared.health.succeeded()
                shared.errors += 1
                shared.lastError = message
            case .failure(let error):
                shared.health.failed(now: ended)
                shared.errors += 1
                shared.lastError = error.description
                connection = nil
            }
        }
        job.answer(result)
    }
}
