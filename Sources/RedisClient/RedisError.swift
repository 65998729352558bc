/// Why a Redis command gave no answer. None of them is the caller's failure:
/// a cache that cannot reach Redis carries on with its own tiers.
public enum RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The `redis://` URL cannot be read.
    case badLocation(String)
    /// The connection failed or broke (refused, reset, timed out): the message from hiredis.
    case connection(String)
    /// Redis is marked down after a failure; no connection is tried until the back-off ends.
    case down
    /// The command waited longer than the timeout for a free connection.
    case busy
    /// Redis answered with an error reply.
    case reply(String)
    /// The client is closed.
    case closed
    /// The command's whole exchange (writing it, reading every byte of its
    /// reply) did not end within the timeout: the connection is dropped.
    case timedOut
    /// The reply went past `RedisReplyLimits` (what it was, in words): the connection is dropped.
    case tooLarge(String)

    public var description: String {
        switch self {
        case .badLocation(let message): message
        case .connection(let message): "cannot reach Redis: \(message)"
        case .down: "Redis is down (waiting before trying again)"
        case .busy: "no Redis connection came free within the timeout"
        case .reply(let message): "Redis answered: \(message)"
        case .closed: "the Redis client is closed"
        case .timedOut: "Redis did not answer a command within the timeout"
        case .tooLarge(let what): "Redis sent \(what): refused"
        }
    }
}
