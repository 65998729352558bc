import Foundation
import SystemPackage

/// The bytes of a source, read in chunks so that a 200 MB feed never sits in
/// memory whole.
public enum FeedInput: Sendable {
    /// A file on disk (a downloaded feed lands in a file first).
    case file(String)
    /// Bytes already in memory (tests, small sources).
    case bytes([UInt8])

    /// The chunk size parsers read with.
    public static let chunkSize = 64 << 10

    /// The total size in bytes, when known (for progress).
    public var size: Int? {
        switch self {
        case .bytes(let bytes): return bytes.count
        case .file(let path):
            return (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        }
    }

    /// Calls `body` with each chunk in order (at most `chunkSize` bytes; never
    /// empty). Stops early when `body` throws, and rethrows.
    public func forEachChunk(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        switch self {
        case .bytes(let bytes):
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + Self.chunkSize)
                try bytes[start..<end].withUnsafeBytes { try body($0) }
                start = end
            }
        case .file(let path):
            let descriptor: FileDescriptor
            do {
                descriptor = try FileDescriptor.open(FilePath(path), .readOnly, options: .closeOnExec)
            } catch {
                throw ImportError("cannot read \(path): \(error)")
            }
            defer { try? descriptor.close() }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
            defer { buffer.deallocate() }
            while true {
                let count: Int
                do {
                    count = try descriptor.read(into: buffer)
                } catch {
                    throw ImportError("cannot read \(path): \(error)")
                }
                if count == 0 { return }
                try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            }
        }
    }
}

extension FeedInput {
    /// The first `count` bytes (fewer when the source is shorter), for telling formats apart.
    public func prefix(_ count: Int) throws -> [UInt8] {
        var bytes: [UInt8] = []
        struct Enough: Error {}
        do {
            try forEachChunk { chunk in
                bytes.append(contentsOf: chunk.prefix(count - bytes.count))
                if bytes.count >= count { throw Enough() }
            }
        } catch is Enough {}
        return bytes
    }
}
