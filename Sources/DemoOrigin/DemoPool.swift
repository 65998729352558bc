import Foundation
import Logging
import Reckoning
import Thumbnailer
import WarmfeedCore

/// Every original a demo item can ask for, made once per folder before the
/// demo origin listens, so no original is ever painted on a reader's path.
///
/// Demo items draw their image's size from ``DemoFeed/imageSizes`` and its
/// format from JPEG, PNG and WebP. For each size and format the pool holds a
/// few pictures (more for JPEG, the commonest format): 40 originals, 2 to 3
/// megapixels each, 46 MB on disk. Item n gets picture n mod their count, so
/// the same item always gets the same bytes, and two items side by side
/// rarely share a picture.
///
/// Painting them all takes about 3 s of CPU (JPEG 60 ms a picture, PNG and
/// WebP about 100 ms at their fast settings), spread over the painter's
/// workers; an existing pool is read back instead. Several servers may share
/// one folder: a lock file makes the second wait for the first's pictures
/// rather than paint them again.
struct DemoPool: Sendable {
    /// One picture of the pool.
    struct Entry: Hashable, Sendable {
        var width: Int
        var height: Int
        var format: OriginalFormat
        var variant: Int

        var fileName: String { "\(width)x\(height)-\(variant).\(format.rawValue)" }

        /// The painter's seed: stable across runs and machines.
        var seed: UInt64 { FNV1a.hash64(Array(fileName.utf8)) }
    }

    /// Pictures per format for each size.
    static let variants: [OriginalFormat: Int] = [.jpeg: 2, .png: 1, .webp: 1]

    /// The whole pool, biggest first (so the last picture painted is a quick one).
    static let entries: [Entry] = DemoFeed.imageSizes.flatMap { size in
        OriginalFormat.allCases.flatMap { format in
            (0..<variants[format, default: 1]).map { Entry(width: size.width, height: size.height, format: format, variant: $0) }
        }
    }.sorted { $0.width * $0.height > $1.width * $1.height }

    private static let sizes = Set(DemoFeed.imageSizes.map { SIMD2($0.width, $0.height) })

    /// The picture for item `number`'s original in `format` at `width` × `height`,
    /// or nil for a size no demo item has.
    static func entry(number: UInt64, format: OriginalFormat, width: Int, height: Int) -> Entry? {
        guard sizes.contains(SIMD2(width, height)) else { return nil }
        let count = UInt64(variants[format, default: 1])
        return Entry(width: width, height: height, format: format, variant: Int(number % count))
    }

    let folder: URL

    func file(_ entry: Entry) -> URL { folder.appendingPathComponent(entry.fileName) }

    /// Paints the pictures not yet in the folder, all of the painter's workers
    /// at once; returns how many were painted.
    func prepare(painter: Thumbnailer, logger: Logger) async throws -> Int {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let lock = try await FolderLock.take(folder.appendingPathComponent(".lock"))
        defer { lock.release() }
        let missing = Self.entries.filter { !FileManager.default.fileExists(atPath: file($0).path) }
        guard !missing.isEmpty else { return 0 }
        let started = ContinuousClock.now
        try await withThrowingDiscardingTaskGroup { group in
            for entry in missing {
                group.addTask {
                    let bytes = try await painter.original(width: entry.width, height: entry.height, seed: entry.seed, format: entry.format)
                    let temporary = folder.appendingPathComponent(".tmp-\(UUID().uuidString)")
                    try Data(bytes).write(to: temporary)
                    guard rename(temporary.path, file(entry).path) == 0 else {
                        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file(entry).path])
                    }
                }
            }
        }
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        logger.info(
            "painted the demo origin's pictures",
            metadata: ["count": "\(missing.count)", "seconds": "\(String(format: "%.1f", seconds))", "folder": "\(folder.path)"])
        return missing.count
    }
}

/// An exclusive `flock` on a file, waited for without blocking a thread.
private struct FolderLock {
    let descriptor: Int32

    static func take(_ url: URL) async throws -> FolderLock {
        let descriptor = open(url.path, O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: url.path]) }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            do {
                try await Task.sleep(for: .milliseconds(50))
            } catch {
                close(descriptor)
                throw error
            }
        }
        return FolderLock(descriptor: descriptor)
    }

    func release() {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
