#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file a download writes: the body goes into `path + ".part"` as it
/// arrives and is renamed to `path` only once whole, so `path` always holds
/// either the copy it held before or a complete new one, never half of one.
///
/// The part file is created with the first byte of body, not before, so an
/// answer without a body (304, or an error) leaves the disk as it was. It lives
/// on the transfer thread only; `discard` (run by `deinit` too) closes and
/// removes a part file this download made, exactly once. The writes block that
/// thread, but they go to the page cache (no fsync), which takes far less time
/// than receiving the bytes did.
final class PartFile {
    /// Where the whole body ends up.
    let path: String
    /// Where it is written meanwhile.
    let partPath: String
    /// Body bytes written so far.
    private(set) var bytesWritten = 0
    /// What went wrong with the file, if anything did.
    private(set) var failure: String?

    private var descriptor: Int32 = -1
    /// Whether this download made the part file (and so must remove it on failure).
    private var created = false

    /// A download into `path`; nothing is opened yet.
    init(path: String) {
        self.path = path
        partPath = path + ".part"
    }

    deinit {
        discard()
    }

    /// Appends `chunk`; `false` when the file could not take it (see `failure`).
    func append(_ chunk: UnsafeRawBufferPointer) -> Bool {
        guard openIfNeeded() else { return false }
        guard let base = chunk.baseAddress else { return true }
        var offset = 0
        while offset < chunk.count {
            let written = write(descriptor, base + offset, chunk.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                failure = "write \(partPath): \(Self.errorText())"
                return false
            }
            offset += written
        }
        bytesWritten += chunk.count
        return true
    }

    /// Closes the part file and renames it to `path`, replacing any copy there;
    /// an empty body makes an empty file. On failure the part file is removed.
    func commit() throws(FetchError) {
        guard openIfNeeded() else { throw .writeFailed(failure ?? partPath) }
        let closing = descriptor
        descriptor = -1
        // Linux reports a delayed write error (a full disk, a network file
        // system) at close; EINTR there still closes the descriptor.
        if close(closing) != 0 && errno != EINTR {
            failure = "close \(partPath): \(Self.errorText())"
        } else if rename(partPath, path) != 0 {
            failure = "rename \(partPath) to \(path): \(Self.errorText())"
        } else {
            created = false
            return
        }
        discard()
        throw .writeFailed(failure ?? partPath)
    }

    /// Closes the part file and removes it if this download made it. Calling it again does nothing.
    func discard() {
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
        if created {
            unlink(partPath)
            created = false
        }
    }

    private func openIfNeeded() -> Bool {
        if descriptor >= 0 { return true }
        guard failure == nil else { return false }
        // O_TRUNC: a part file left by a process that died mid-download is started over.
        descriptor = open(partPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            failure = "open \(partPath): \(Self.errorText())"
            return false
        }
        created = true
        return true
    }

    private static func errorText() -> String {
        String(cString: strerror(errno))
    }
}
