import CHiredis

/// A Redis reply, copied out of hiredis's reply object.
public enum RedisValue: Sendable, Equatable {
    case bytes([UInt8])
    case integer(Int)
    case array([RedisValue])
    case status(String)
    case null

    /// Copies `reply` (nothing of it is kept); an error reply becomes `RedisError.reply`.
    init(_ reply: UnsafePointer<redisReply>) throws(RedisError) {
        let reply = reply.pointee
        switch reply.type {
        case REDIS_REPLY_STRING:
            self = .bytes(reply.len == 0 ? [] : Array(UnsafeRawBufferPointer(start: reply.str, count: reply.len)))
        case REDIS_REPLY_INTEGER:
            self = .integer(Int(reply.integer))
        case REDIS_REPLY_STATUS:
            self = .status(String(decoding: UnsafeRawBufferPointer(start: reply.str, count: reply.len), as: UTF8.self))
        case REDIS_REPLY_ERROR:
            throw .reply(String(decoding: UnsafeRawBufferPointer(start: reply.str, count: reply.len), as: UTF8.self))
        case REDIS_REPLY_ARRAY:
            var elements: [RedisValue] = []
            elements.reserveCapacity(reply.elements)
            for index in 0..<reply.elements {
                guard let element = reply.element[index] else { elements.append(.null); continue }
                elements.append(try RedisValue(element))
            }
            self = .array(elements)
        default:
            self = .null
        }
    }

    /// The bytes of a bulk string; nil for anything else.
    public var bytes: [UInt8]? {
        if case .bytes(let bytes) = self { return bytes }
        return nil
    }

    /// The integer of an integer reply; nil for anything else.
    public var integer: Int? {
        if case .integer(let value) = self { return value }
        return nil
    }
}
