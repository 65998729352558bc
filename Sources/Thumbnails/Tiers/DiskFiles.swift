import Foundation
import Gzip
import Synchronization
import SystemPackage
import WarmfeedCore

/// Files in one folder, each named by a key packed into 12 bytes, within a
/// budget of bytes on disk and one of memory for their index: what the disk
/// tier of thumbnails and the store of originals are both made of.
///
/// Each file carries a header (magic, length, CRC-32 of the body) checked on
/// every read: a torn or corrupted file is deleted and reported as a miss, never
/// served. The CRC is libdeflate's, as the row file's: over a multi-megabyte
/// original, the byte-at-a-time FNV-1a the first version summed with cost a
/// few milliseconds a write (and a sixth of the server's CPU in a debug build's
/// scroll); a file of that version is an earlier version's, deleted as a miss
/// and not counted corrupt. Writes go to a temporary file renamed into place
/// (atomic on POSIX). Past either budget the least recently used files go first.
final class DiskFiles: Sendable {
    private static let magic: [UInt8] = Array("WFT2".utf8)
    /// The first version's magic (an FNV-1a-64 sum).
    private static let earlierMagic: [UInt8] = Array("WFT1".utf8)
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
        let found: Found
        do { found = try Self.body(at: path) } catch {
            index.withLock { _ = $0.remove(key) }
            return nil
        }
        guard case .body(let body) = found else {
            if found == .corrupt { corrupt.withLock { $0 += 1 } }
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
        do {
            let descriptor = try FileDescriptor.open(
                temporary, .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec], permissions: [.ownerReadWrite, .groupRead, .otherRead])
            // The header, then the body as it is: no copy of a multi-megabyte original.
            try descriptor.closeAfter {
                _ = try Self.header(of: bytes).withUnsafeBytes { try descriptor.writeAll($0) }
                _ = try bytes.withUnsafeBytes { try descriptor.writeAll($0) }
            }
            // rename(2) replaces the old file atomically: a reader sees the old or the new one, never half.
            try Self.rename(temporary, to: path)
        } catch {
            _ = temporary.withPlatformString { unlink($0) }
            return
        }
        let evicted = index.withLock { $0.insert(key, size: Self.headerSize + bytes.count) }
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

    /// What a file holds.
    enum Found: Equatable {
        case body([UInt8])
        /// Torn, cut short, grown, or not the bytes its sum was taken of.
        case corrupt
        /// Written by the first version (`earlierMagic`).
        case earlier
    }

    /// The body of the file at `path`, read into one array of its length
    /// (the header says it) and checked against its sum.
    static func body(at path: FilePath) throws -> Found {
        let descriptor = try FileDescriptor.open(path, .readOnly, options: .closeOnExec)
        return try descriptor.closeAfter {
            var header = [UInt8](repeating: 0, count: headerSize)
            guard try read(descriptor, into: &header) == headerSize else { return .corrupt }
            if header.starts(with: earlierMagic) { return .earlier }
            guard header.starts(with: magic) else { return .corrupt }
            let length = header[4..<12].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let sum = header[12..<20].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            // The length the file has, before anything is allocated for the one its header says.
            let size = try descriptor.seek(offset: 0, from: .end)
            guard size >= Int64(headerSize), length == UInt64(size) - UInt64(headerSize) else { return .corrupt }
            _ = try descriptor.seek(offset: Int64(headerSize), from: .start)
            var body = [UInt8](repeating: 0, count: Int(length))
            guard try read(descriptor, into: &body) == body.count else { return .corrupt }
            guard UInt64(body.withUnsafeBytes { Gzip.crc32($0) }) == sum else { return .corrupt }
            return .body(body)
        }
    }

    /// Reads into the whole of `buffer` unless the file ends first; returns the bytes read.
    private static func read(_ descriptor: FileDescriptor, into buffer: inout [UInt8]) throws -> Int {
        var filled = 0
        while filled < buffer.count {
            let count = try buffer.withUnsafeMutableBytes { try descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...])) }
            if count == 0 { break }
            filled += count
        }
        return filled
    }

    /// rename(2), its failure as an `Errno`.
    static func rename(_ from: FilePath, to: FilePath) throws {
        let result = from.withPlatformString { old in to.withPlatformString { new in Foundation.rename(old, new) } }
        if result != 0 { throw Errno(rawValue: errno) }
    }

    /// The header of a file holding `body`: magic, length and CRC-32, little-endian.
    static func header(of body: [UInt8]) -> [UInt8] {
        var header = magic
        header.reserveCapacity(headerSize)
        withUnsafeBytes(of: UInt64(body.count).littleEndian) { header.append(contentsOf: $0) }
        let sum = UInt64(body.withUnsafeBytes { Gzip.crc32($0) })
        withUnsafeBytes(of: sum.littleEndian) { header.append(contentsOf: $0) }
        return header
    }
}
