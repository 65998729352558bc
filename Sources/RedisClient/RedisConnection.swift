import CHiredis
import Glibc
import Reckoning

/// One hiredis context: used by one thread at a time (a context is not
/// thread-safe), dropped when it fails (a context whose `err` is set is dead,
/// and so is one left in the middle of a reply).
///
/// hiredis formats each command and parses each reply; the waiting is this
/// type's own: the socket is non-blocking and every write and read waits in
/// `poll` against the command's one deadline, so a Redis that drips its
/// answer a byte at a time holds the thread no longer than one that says
/// nothing. A reply past `RedisReplyLimits` fails the command.
final class RedisConnection {
    private let context: UnsafeMutablePointer<redisContext>
    /// The reader's bound on objects; freed after the context, whose reader uses it to the end.
    private let bounds: UnsafeMutablePointer<warmfeed_redis_bounds>
    private let limits: RedisReplyLimits
    /// Set when a command stopped midway (a deadline, a reply too large): what
    /// Redis sends next would be read as the next command's reply.
    private var abandoned = false

    /// Connects to `location` within `timeout`, then authenticates and
    /// selects the database within `timeout` more.
    init(_ location: RedisLocation, timeout: Duration, limits: RedisReplyLimits) throws(RedisError) {
        let milliseconds = Int32(clamping: max(1, timeout.wholeMillisecondsRoundedUp))
        guard let context = warmfeed_redis_connect(location.host, Int32(location.port), milliseconds) else {
            throw .connection("out of memory")
        }
        if context.pointee.err != 0 {
            let message = Self.message(of: context)
            redisFree(context)
            throw .connection("\(location.host):\(location.port): \(message)")
        }
        self.context = context
        self.limits = limits
        bounds = .allocate(capacity: 1)
        warmfeed_redis_bound_replies(context, bounds, limits.maxObjects)
        let deadline = ContinuousClock.now + timeout
        do throws(RedisError) {
            if let password = location.password {
                _ = try run(["AUTH", password].map { Array($0.utf8) }, deadline: deadline)
            }
            if location.database != 0 {
                _ = try run(["SELECT", String(location.database)].map { Array($0.utf8) }, deadline: deadline)
            }
        } catch .reply(let message) {
            // A Redis that refuses the password (or the database) cannot be used: it is not up for this client.
            throw .connection("\(location.host):\(location.port): \(message)")
        }
    }

    deinit {
        redisFree(context)
        bounds.deallocate()
    }

    /// Whether the connection broke or was left midway; it must be dropped then.
    var isBroken: Bool { abandoned || context.pointee.err != 0 }

    /// Sends one command and reads its reply, all before `deadline`.
    func run(_ arguments: [[UInt8]], deadline: ContinuousClock.Instant) throws(RedisError) -> RedisValue {
        guard !isBroken else { throw .connection("the connection was dropped") }
        do throws(RedisError) {
            try send(arguments, deadline: deadline)
            return try receive(deadline: deadline)
        } catch {
            // An error reply leaves the connection sound; anything else leaves it midway.
            if case .reply = error {} else { abandoned = true }
            throw error
        }
    }

    private func send(_ arguments: [[UInt8]], deadline: ContinuousClock.Instant) throws(RedisError) {
        let appended = Self.withArgv(arguments) { argv, lengths in
            redisAppendCommandArgv(context, Int32(arguments.count), argv, lengths)
        }
        guard appended == REDIS_OK else { throw .connection(Self.message(of: context)) }
        var done: Int32 = 0
        while done == 0 {
            try wait(for: Int16(POLLOUT), until: deadline)
            guard redisBufferWrite(context, &done) == REDIS_OK else { throw .connection(Self.message(of: context)) }
        }
    }

    private func receive(deadline: ContinuousClock.Instant) throws(RedisError) -> RedisValue {
        bounds.pointee.objects = 0
        bounds.pointee.refused = 0
        var received = 0
        var reply: UnsafeMutableRawPointer?
        while true {
            guard redisGetReplyFromReader(context, &reply) == REDIS_OK else { throw readFailure() }
            if let reply {
                defer { freeReplyObject(reply) }
                return try RedisValue(reply.assumingMemoryBound(to: redisReply.self))
            }
            try wait(for: Int16(POLLIN), until: deadline)
            let read = warmfeed_redis_read(context)
            guard read >= 0 else { throw readFailure() }
            received += read
            // Everything read counts, whether the reader still holds it or has made objects of it.
            guard received <= limits.maxBytes else { throw .tooLarge("a reply of more than \(limits.maxBytes) bytes") }
        }
    }

    /// Why the reader stopped: a reply with more objects than allowed, or the connection.
    private func readFailure() -> RedisError {
        if bounds.pointee.refused != 0 { return .tooLarge("a reply of more than \(limits.maxObjects) values") }
        return .connection(Self.message(of: context))
    }

    /// Waits until the socket is ready for `events` (or has failed: the
    /// read or write that follows says how), or throws at `deadline`.
    private func wait(for events: Int16, until deadline: ContinuousClock.Instant) throws(RedisError) {
        while true {
            let left = deadline - .now
            guard left > .zero else { throw .timedOut }
            var descriptor = pollfd(fd: context.pointee.fd, events: events, revents: 0)
            let ready = poll(&descriptor, 1, Int32(clamping: max(1, left.wholeMillisecondsRoundedUp)))
            if ready > 0 { return }
            if ready < 0, errno != EINTR { throw .connection("poll failed: errno \(errno)") }
        }
    }

    /// Calls `body` with C pointers to every argument's bytes and their lengths.
    private static func withArgv<T>(
        _ arguments: [[UInt8]], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> T
    ) -> T {
        // One buffer holds every argument, so no pointer outlives its array.
        var joined: [UInt8] = []
        joined.reserveCapacity(arguments.reduce(0) { $0 + $1.count } + 1)
        var offsets: [Int] = []
        for argument in arguments {
            offsets.append(joined.count)
            joined += argument
        }
        joined.append(0)
        let lengths = arguments.map(\.count)
        return joined.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            var pointers: [UnsafePointer<CChar>?] = offsets.map { base + $0 }
            return pointers.withUnsafeMutableBufferPointer { argv in
                lengths.withUnsafeBufferPointer { body(argv.baseAddress!, $0.baseAddress!) }
            }
        }
    }

    private static func message(of context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return bytes.isEmpty ? "error \(context.pointee.err)" : String(decoding: bytes, as: UTF8.self)
        }
    }
}

/// What one reply may hold, so that no Redis (or whatever answers in its
/// place) can make a command take more memory than this.
public struct RedisReplyLimits: Sendable, Equatable {
    /// Bytes read for one reply.
    public var maxBytes: Int
    /// Values in one reply, each array's slots counted besides its elements.
    public var maxObjects: Int

    /// 1 MiB and 1,024 values: a thumbnail is tens of kilobytes; the shared
    /// tier's longest reply is a value and its time to live.
    public init(maxBytes: Int = 1 << 20, maxObjects: Int = 1024) {
        self.maxBytes = maxBytes
        self.maxObjects = maxObjects
    }
}
