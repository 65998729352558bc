import Foundation
import Reckoning
import Synchronization
import SystemPackage

/// Thumbnails on disk in the data folder, so a restart starts warm.
///
/// Each file carries a header (magic, length, FNV-1a-64 of the body) checked on
/// every read: a torn or corrupted file is deleted and reported as a miss, never
/// served. Writes go to a temporary file renamed into place (atomic on POSIX).
/// The total size is bounded, and so is the memory of the index of what is on
/// disk (`DiskTierIndex`); past either, the least recently used files go first.
public final class ThumbnailDiskTier: Sendable {
    private static let magic: [UInt8] = Array("WFT1".utf8)
    private static let headerSize = 4 + 8 + 8

    /// The folder holding the files.
    public let folder: URL
    private let index: Mutex<DiskTierIndex>
    private let corrupt = Mutex(0)

    /// Opens the tier in `folder` (created when missing), indexing the files
    /// already there, oldest first, within `budget` bytes on disk and an index
    /// of `indexBudget` bytes of memory.
    public init(folder: URL, budget: Int, indexBudget: Int = ThumbnailDiskTier.defaultIndexBudget) throws {
        self.folder = folder
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var found: [(key: UInt64, size: Int, modified: Date)] = []
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for name in names {
            let url = folder.appendingPathComponent(name)
            guard let key = Self.key(fromFileName: name)?.packed else {
                // Leftover temporary files from a write cut short.
                if name.hasPrefix(".tmp-") { try? FileManager.default.removeItem(at: url) }
                continue
            }
            let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
            found.append((key, (attributes?[.size] as? Int) ?? 0, (attributes?[.modificationDate] as? Date) ?? .distantPast))
        }
        var known = DiskTierIndex(diskBudget: budget, memoryBudget: indexBudget)
        for entry in found.sorted(by: { $0.modified < $1.modified }) {
            for evicted in known.insert(entry.key, size: entry.size) {
                guard let key = ThumbnailKey(packed: evicted) else { continue }
                try? FileManager.default.removeItem(at: folder.appendingPathComponent(Self.fileName(of: key)))
            }
        }
        index = Mutex(known)
    }

    /// The thumbnail for `key` if a valid file holds it; a corrupt file is removed.
    public func read(_ key: ThumbnailKey) -> [UInt8]? {
        guard let packed = key.packed, index.withLock({ $0.touch(packed) }) else { return nil }
        let path = path(of: key)
        guard let file = try? Self.contents(of: path) else {
            index.withLock { _ = $0.remove(packed) }
            return nil
        }
        guard let body = Self.unwrap(file) else {
            corrupt.withLock { $0 += 1 }
            index.withLock { _ = $0.remove(packed) }
            _ = path.withPlatformString { unlink($0) }
            return nil
        }
        return body
    }

    /// Stores the thumbnail for `key`, evicting old files past the budget.
    public func write(_ key: ThumbnailKey, _ bytes: [UInt8]) {
        guard let packed = key.packed else { return }
        let path = path(of: key)
        let temporary = FilePath(folder.appendingPathComponent(".tmp-\(UUID().uuidString)").path)
        let file = Self.wrap(bytes)
        do {
            let descriptor = try FileDescriptor.open(temporary, .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec], permissions: [.ownerReadWrite, .groupRead, .otherRead])
            try descriptor.closeAfter { _ = try file.withUnsafeBytes { try descriptor.writeAll($0) } }
            // rename(2) replaces the old file atomically: a reader sees the old or the new one, never half.
            try Self.rename(temporary, to: path)
        } catch {
            _ = temporary.withPlatformString { unlink($0) }
            return
        }
        let evicted = index.withLock { $0.insert(packed, size: file.count) }
        for victim in evicted {
            guard let victim = ThumbnailKey(packed: victim) else { continue }
            _ = self.path(of: victim).withPlatformString { unlink($0) }
        }
    }

    private func path(of key: ThumbnailKey) -> FilePath {
        FilePath(folder.appendingPathComponent(Self.fileName(of: key)).path)
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

    /// The index's memory budget unless one is given: 16 MiB, 393,216 thumbnails
    /// (the default 1 GiB on disk holds as many of 2.7 KB).
    public static let defaultIndexBudget = 16 << 20

    /// What the tier holds and may hold.
    public struct Usage: Sendable, Equatable {
        /// Files and bytes on disk, and the disk budget.
        public var entries = 0, bytes = 0, budget = 0
        /// Corrupt or torn files found (and removed) so far.
        public var corrupt = 0
        /// The memory the index holds now, its budget, and the files it can index at most.
        public var indexBytes = 0, indexBudget = 0, maxEntries = 0

        public init() {}
    }

    /// What the tier holds now.
    public var usage: Usage {
        var usage = index.withLock { index in
            var usage = Usage()
            (usage.entries, usage.bytes, usage.budget) = (index.count, index.diskBytes, index.diskBudget)
            (usage.indexBytes, usage.indexBudget, usage.maxEntries) = (index.memoryBytes, index.memoryBudget, index.maxEntries)
            return usage
        }
        usage.corrupt = corrupt.withLock { $0 }
        return usage
    }

    static func fileName(of key: ThumbnailKey) -> String {
        "\(key.itemID)-\(key.variant.name).\(key.variant.format.rawValue)"
    }

    static func key(fromFileName name: String) -> ThumbnailKey? {
        let parts = name.split(separator: ".")
        guard parts.count == 2, let format = ImageFormat(rawValue: String(parts[1])) else { return nil }
        let stem = parts[0].split(separator: "-")
        guard stem.count == 2, let id = Int64(stem[0]), let variant = ThumbnailVariant(name: String(stem[1]), format: format) else { return nil }
        return ThumbnailKey(itemID: id, variant: variant)
    }

    static func wrap(_ body: [UInt8]) -> [UInt8] {
        var data = magic
        data.reserveCapacity(headerSize + body.count)
        withUnsafeBytes(of: UInt64(body.count).littleEndian) { data.append(contentsOf: $0) }
        let sum = FNV1a.hash64(body)
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
        guard FNV1a.hash64(body) == sum else { return nil }
        return body
    }
}
