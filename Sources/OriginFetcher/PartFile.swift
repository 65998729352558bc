#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SystemPackage

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

    private var descriptor: FileDescriptor?
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
        guard let descriptor = openIfNeeded() else { return false }
        do {
            _ = try descriptor.writeAll(chunk)
        } catch {
            failure = "write \(partPath): \(error)"
            return false
        }
        bytesWritten += chunk.count
        return true
    }

    /// Closes the part file and renames it to `path`, replacing any copy there;
    /// an empty body makes an empty file. On failure the part file is removed.
    func commit() throws(FetchError) {
        guard let closing = openIfNeeded() else { throw .writeFailed(failure ?? partPath) }
        descriptor = nil
        // Linux reports a delayed write error (a full disk, a network file
        // system) at close; EINTR there still closes the descriptor.
        do {
            try closing.close()
        } catch let error as Errno where error != .interrupted {
            failure = "close \(partPath): \(error)"
        } catch {}
        if failure == nil {
            guard rename(partPath, path) != 0 else {
                created = false
                return
            }
            failure = "rename \(partPath) to \(path): \(Errno(rawValue: errno))"
        }
        discard()
        throw .writeFailed(failure ?? partPath)
    }

    /// Closes the part file and removes it if this download made it. Calling it again does nothing.
    func discard() {
        if let descriptor {
            try? descriptor.close()
            self.descriptor = nil
        }
        if created {
            unlink(partPath)
            created = false
        }
    }

    /// The part file, opened (and created) on first use; nil once anything failed.
    private func openIfNeeded() -> FileDescriptor? {
        if let descriptor { return descriptor }
        guard failure == nil else { return nil }
        do {
            // .truncate: a part file left by a process that died mid-download is started over.
            let opened = try FileDescriptor.open(
                FilePath(partPath), .writeOnly, options: [.create, .truncate, .closeOnExec],
                permissions: [.ownerReadWrite, .groupRead, .otherRead]
            )
            descriptor = opened
            created = true
            return opened
        } catch {
            failure = "open \(partPath): \(error)"
            return nil
        }
    }
}
