/// An immutable block of body bytes at a stable address.
///
/// The event loop sends a response body straight from this memory, so a body
/// that is kept (a cached page, a static file) is handed to every request
/// without a copy: each answer retains the block until it is sent.
public final class ResponseBytes: @unchecked Sendable {
    // Safe to share: the memory is written once in `init` and only read after.
    let base: UnsafeMutableRawPointer
    /// The number of bytes.
    public let count: Int

    /// Copies `bytes` into a new block.
    public init(_ bytes: some Collection<UInt8>) {
        count = bytes.count
        // Never allocate zero bytes: an empty body still has a real address.
        base = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(count, 1), alignment: 16)
        let buffer = UnsafeMutableRawBufferPointer(start: base, count: count)
        // Arrays and other contiguous bytes in one memcpy: the generic copy
        // goes element by element through protocol witnesses when not
        // specialized across modules (a third of a cold page's CPU in perf).
        let copied: Void? = bytes.withContiguousStorageIfAvailable { source in
            buffer.copyMemory(from: UnsafeRawBufferPointer(source))
        }
        if copied == nil { _ = buffer.initializeMemory(as: UInt8.self, from: bytes) }
    }

    /// The UTF-8 bytes of `text`.
    public convenience init(_ text: String) {
        self.init(Array(text.utf8))
    }

    /// An empty body.
    public static let empty = ResponseBytes([UInt8]())

    deinit { base.deallocate() }

    /// Reads the bytes without copying them.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// A copy of the bytes as an array.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
}
