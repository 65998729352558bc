import Foundation

/// A file beside a store read and written at positions (`pread`,
/// `pwrite`), never through a stream: the row file and the page index.
public final class PositionedFile: Sendable {
    public let path: String
    private let descriptor: Int32

    public struct Failure: Error, CustomStringConvertible {
        public var description: String

        public init(description: String) { self.description = description }
    }

    /// Opens (and creates, when missing) the file at `path`.
    public init(path: String) throws {
        self.path = path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Failure(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        descriptor = fd
    }

    deinit {
        close(descriptor)
    }

    /// The file's length now (0 when it cannot be read).
    public var size: Int64 {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return 0 }
        return Int64(status.st_size)
    }

    /// Reads `buffer.count` bytes from `at` into `buffer`; answers how many
    /// there were (fewer at the file's end).
    public func read(at: Int64, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var done = 0
        while done < buffer.count {
            let count = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(at) + off_t(done))
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            done += count
        }
        return done
    }

    /// Writes `bytes` at `at`, whole.
    public func write(_ bytes: [UInt8], at: Int64) throws {
        try bytes.withUnsafeBytes { buffer in
            var written = 0
            while written < buffer.count {
                let count = pwrite(descriptor, buffer.baseAddress! + written, buffer.count - written, off_t(at) + off_t(written))
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { throw Failure(description: "cannot write \(path): \(String(cString: strerror(errno)))") }
                written += count
            }
        }
    }

    /// Empties the file.
    public func truncate() throws {
        guard ftruncate(descriptor, 0) == 0 else { throw Failure(description: "cannot truncate \(path): \(String(cString: strerror(errno)))") }
    }
}
