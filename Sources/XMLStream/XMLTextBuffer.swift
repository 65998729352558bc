/// Text gathered from a handler's `text` pieces, up to a size the caller
/// chooses: past it the buffer stops growing and says so, so that one huge
/// text node in a hostile document costs at most `limit` bytes.
public struct XMLTextBuffer: Sendable {
    /// The most UTF-8 bytes kept.
    public let limit: Int
    /// Whether more text came than `limit` allows; what is kept is then a
    /// prefix (possibly cut inside a character).
    public private(set) var isOverLimit = false
    private var bytes: [UInt8] = []

    /// An empty buffer that keeps at most `limit` bytes.
    public init(limit: Int) {
        self.limit = limit
    }

    /// The number of bytes kept.
    public var byteCount: Int { bytes.count }

    /// Adds a piece of text (UTF-8), or as much of it as fits.
    public mutating func append(_ utf8: UnsafeRawBufferPointer) {
        guard !isOverLimit else { return }
        let room = limit - bytes.count
        if utf8.count > room {
            isOverLimit = true
            bytes.append(contentsOf: utf8.prefix(room))
        } else {
            bytes.append(contentsOf: utf8)
        }
    }

    /// Adds `text`, or as much of it as fits.
    public mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    /// The text kept (an invalid sequence left by a cut becomes U+FFFD).
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The text without the XML white space (space, tab, CR, LF) around it.
    /// Trimmed on the bytes: Foundation's `trimmingCharacters` goes through
    /// UTF-16 on Linux and was a fifth of an import's time.
    public var trimmedText: String {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }

    /// Empties the buffer for reuse, forgetting that it overflowed.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: false)
        isOverLimit = false
    }
}
