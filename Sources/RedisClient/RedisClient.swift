import DequeModule
import Foundation
import Reckoning
import Synchronization

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
        /// Seconds Redis has been unreachable, while it is.
        public var downForSeconds: Double?
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

    private struct Shared {
        var queue = Deque<Job>()
        var health = RedisHealth()
        var stopping = false
        var commands = 0
        var errors = 0
        var busy = 0
        var lastError: String?
    }

    public let location: RedisLocation
    public let timeout: Duration
    /// What one reply may hold; a larger one fails its command (`.tooLarge`).
    public let limits: RedisReplyLimits
    private let condition = NSCondition()
    // Only touched with `condition` locked.
    private nonisolated(unsafe) var shared = Shared()
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
        shared.health = RedisHealth(firstBackOff: firstBackOff, longestBackOff: max(5, firstBackOff))
        maxQueued = 64 * max(1, connections)
        for index in 0..<max(1, connections) {
            let thread = Thread { [self] in work() }
            thread.name = "redis-\(index)"
            thread.start()
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
        let refused: RedisError? = condition.withLock {
            if shared.stopping { return .closed }
            if !shared.health.isUp, shared.health.downSince != nil, !canProbe() { return .down }
            if ahead {
                shared.queue.prepend(job)
                condition.signal()
                return nil
            }
            if shared.queue.count >= maxQueued {
                shared.busy += 1
                return .busy
            }
            shared.queue.append(job)
            condition.signal()
            return nil
        }
        if let refused { job.answer(.failure(refused)) }
    }

    /// Whether a probe could go now (checked without taking the probe's turn).
    private func canProbe() -> Bool {
        var copy = shared.health
        return copy.mayTry(now: seconds())
    }

    public var status: Status {
        condition.withLock {
            Status(
                location: location.description, up: shared.health.isUp,
                downForSeconds: shared.health.downSince.map { seconds() - $0 },
                commands: shared.commands, errors: shared.errors, busy: shared.busy, lastError: shared.lastError
            )
        }
    }

    /// Answers what is queued with `.closed` and lets the threads end.
    public func close() {
        let dropped: [Job] = condition.withLock {
            shared.stopping = true
            let jobs = Array(shared.queue)
            shared.queue.removeAll()
            condition.broadcast()
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

    private func work() {
        var connection: RedisConnection?
        while let job = next() {
            guard ContinuousClock.now - job.queuedAt <= timeout else {
                condition.withLock { shared.busy += 1 }
                job.answer(.failure(.busy))
                continue
            }
            let mayTry = condition.withLock { shared.health.mayTry(now: seconds()) }
            guard mayTry else {
                job.answer(.failure(.down))
                continue
            }
            let result: Result<RedisValue, RedisError>
            do throws(RedisError) {
                if connection == nil { connection = try RedisConnection(location, timeout: timeout, limits: limits) }
                result = .success(try connection!.run(job.arguments, deadline: .now + timeout))
            } catch {
                result = .failure(error)
            }
            if connection?.isBroken == true { connection = nil }
            condition.withLock {
                shared.commands += 1
                switch result {
                case .success: shared.health.succeeded()
                case .failure(.reply(let message)):
                    // Redis answered: it is up; the command was wrong (or Redis is out of memory).
                    shared.health.succeeded()
                    shared.errors += 1
                    shared.lastError = message
                case .failure(let error):
                    shared.health.failed(now: seconds())
                    shared.errors += 1
                    shared.lastError = error.description
                    connection = nil
                }
            }
            job.answer(result)
        }
    }

    private func next() -> Job? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let job = shared.queue.popFirst() { return job }
            if shared.stopping { return nil }
            condition.wait()
        }
    }
}
