import Foundation
import Reckoning
import Synchronization
import SystemPackage
import WarmfeedCore

/// Files in one folder, each named by a key packed into 12 bytes, within a
/// budget of bytes on disk and one of memory for their index: what the disk
/// tier of thumbnails and the store of originals are both made of.
///
/// Each file carries a header (magic, length, FNV-1a-64 of the body) checked on
/// every read: a torn or corrupted file is deleted and reported as a miss, never
/// served. Writes go to a temporary file renamed into place (atomic on POSIX).
/// Past either budget the least recently used files go first.
final class DiskFiles: Sendable {
    private static let magic: [UInt8] = Array("WFT1".utf8)
    static let headerSize = 4 + 8 + 8

    /// The folder holding the files.
    let folder: URL
    private let index: Mutex<DiskTierIndex>
    private let corrupt = Mutex(0)
    private let name: @Sendable (DiskKey) -> String

    /// Opens the files in `folder` (created when missing), indexing those
    /// already there whose names `key` reads, oldest first, within `budget`
    /// bytes on disk and an index of `indexBudget` bytes of memory. `name` and
    /// `key` turn a packed key into a file name and back. A file whose name
    /// `key` cannot read is removed: the folder is this cache's own, so it is
    /// an earlier version's (keyed by item alone, which would show another
    /// picture) or a write cut short.
    init(folder: URL, budget: Int, indexBudget: Int, name: @escaping @Sendable (DiskKey) -> String, key: (String) -> DiskKey?) throws {
        self.folder = folder
        self.name = name
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var found: [(key: DiskKey, size: Int, modified: Date)] = []
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for file in names {
            let url = folder.appendingPathComponent(file)
            guard let packed = key(file) else {
                try? FileManager.default.removeItem(at: url)
                continue
            }
            let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
            found.append((packed, (attributes?[.size] as? Int) ?? 0, (attributes?[.modificationDate] as? Date) ?? .distantPast))
        }
        var known = DiskTierIndex(diskBudget: budget, memoryBudget: indexBudget)
        for entry in found.sorted(by: { $0.modified < $1.modified }) {
            for evicted in known.insert(entry.key, size: entry.size) {
                try? FileManager.default.removeItem(at: folder.appendingPathComponent(name(evicted)))
            }
        }
        index = Mutex(known)
    }

    /// The body kept for `key` if a valid file holds it; a corrupt file is removed.
    func read(_ key: DiskKey) -> [UInt8]? {
        guard index.withLock({ $0.touch(key) }) else { return nil }
        let path = path(of: key)
        guard let file = try? Self.contents(of: path) else {
            index.withLock { _ = $0.remove(key) }
            return nil
        }
        guard let body = Self.unwrap(file) else {
            corrupt.withLock { $0 += 1 }
            index.withLock { _ = $0.remove(key) }
            _ = path.withPlatformString { unlink($0) }
            return nil
        }
        return body
    }

    /// Keeps `bytes` for `key`, evicting old files past the budgets.
    func write(_ key: DiskKey, _ bytes: [UInt8]) {
        let path = path(of: key)
        let temporary = FilePath(folder.appendingPathComponent(".tmp-\(UUID().uuidString)").path)
        let file = Self.wrap(bytes)
        do {
            let descriptor = try FileDescriptor.open(
                temporary, .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec], permissions: [.ownerReadWrite, .groupRead, .otherRead])
            try descriptor.closeAfter { _ = try file.withUnsafeBytes { try descriptor.writeAll($0) } }
            // rename(2) replaces the old file atomically: a reader sees the old or the new one, never half.
            try Self.rename(temporary, to: path)
        } catch {
            _ = temporary.withPlatformString { unlink($0) }
            return
        }
        let evicted = index.withLock { $0.insert(key, size: file.count) }
        for victim in evicted {
            _ = self.path(of: victim).withPlatformString { unlink($0) }
        }
    }

    /// Whether a file is indexed for `key`, without touching its recency.
    func contains(_ key: DiskKey) -> Bool {
        index.withLock { $0.contains(key) }
    }

    private func path(of key: DiskKey) -> FilePath {
        FilePath(folder.appendingPathComponent(name(key)).path)
    }

    /// What the files hold and may hold.
    var usage: ThumbnailDiskTier.Usage {
        var usage = index.withLock { index in
            var usage = ThumbnailDiskTier.Usage()
            (usage.entries, usage.bytes, usage.budget) = (index.count, index.diskBytes, index.diskBudget)
            (usage.indexBytes, usage.indexBudget, usage.maxEntries) = (index.memoryBytes, index.memoryBudget, index.maxEntries)
            return usage
        }
        usage.corrupt = corrupt.withLock { $0 }
        return usage
    }

    /// The whole file at `path`.
    static func contents(of path: FilePath) throws -> [UInt8] {
        let descriptor = try FileDescriptor.open(path, .readOnly, options: .closeOnExec)
        return try descriptor.closeAfter {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                let count = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) }
                if count == 0 { return bytes }
                bytes.append(contentsOf: chunk[0..<count])
            }
        }
    }

    /// rename(2), its failure as an `Errno`.
    static func rename(_ from: FilePath, to: FilePath) throws {
        let result = from.withPlatformString { old in to.withPlatformString { new in Foundation.rename(old, new) } }
        if result != 0 { throw Errno(rawValue: errno) }
    }

    static func wrap(_ body: [UInt8]) -> [UInt8] {
        var data = magic
        data.reserveCapacity(headerSize + body.count)
        withUnsafeBytes(of: UInt64(body.count).littleEndian) { data.append(contentsOf: $0) }
        let sum = body.withUnsafeBytes { FNV1a.hash64($0) }
        withUnsafeBytes(of: sum.littleEndian) { data.append(contentsOf: $0) }
        data.append(contentsOf: body)
        return data
    }

    static func unwrap(_ bytes: [UInt8]) -> [UInt8]? {
        guard bytes.count >= headerSize, Array(bytes[0..<4]) == magic else { return nil }
        let length = bytes[4..<12].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let sum = bytes[12..<20].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard length == UInt64(bytes.count - headerSize) else { return nil }
        let body = Array(bytes[headerSize...])
        guard body.withUnsafeBytes({ FNV1a.hash64($0) }) == sum else { return nil }
        return body
    }
}
