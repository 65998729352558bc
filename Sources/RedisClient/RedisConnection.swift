import CHiredis

/// One hiredis context: used by one thread at a time (a context is not
/// thread-safe), freed when it fails (a context whose `err` is set is dead).
final class RedisConnection {
    private let context: UnsafeMutablePointer<redisContext>

    /// Connects to `location` within `timeoutMilliseconds`, which then bounds every command;
    /// authenticates and selects the database.
    init(_ location: RedisLocation, timeoutMilliseconds: Int) throws(RedisError) {
        guard let context = warmfeed_redis_connect(location.host, Int32(location.port), Int32(timeoutMilliseconds)) else {
            throw .connection("out of memory")
        }
        if context.pointee.err != 0 {
            let message = Self.message(of: context)
            redisFree(context)
            throw .connection("\(location.host):\(location.port): \(message)")
        }
        self.context = context
        if let password = location.password {
            _ = try run(["AUTH", password].map { Array($0.utf8) })
        }
        if location.database != 0 {
            _ = try run(["SELECT", String(location.database)].map { Array($0.utf8) })
        }
    }

    deinit { redisFree(context) }

    /// Whether the connection broke; it must be dropped then.
    var isBroken: Bool { context.pointee.err != 0 }

    /// Sends one command and waits (at most the timeout) for its reply.
    func run(_ arguments: [[UInt8]]) throws(RedisError) -> RedisValue {
        let reply = Self.withArgv(arguments) { argv, lengths in
            warmfeed_redis_command(context, Int32(arguments.count), argv, lengths)
        }
        guard let reply else { throw .connection(Self.message(of: context)) }
        defer { freeReplyObject(reply) }
        return try RedisValue(reply)
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
