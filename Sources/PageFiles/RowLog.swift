import Foundation
import WarmfeedCore

/// A store's rows rendered ahead (see `PreparedPage`), appended to one file
/// beside it (SQLite's `feed.sqlite-rows`, a PostgreSQL node's copy), each
/// found through its item's place and size (SQLite's `ahead_at` and
/// `ahead_size`, a `PageIndex` record).
///
/// Why a file and not a column: kept in the item table, the ~800-byte rows
/// tripled every item's size, and a cold page cost a B-tree descent per row
/// and a `pread` per leaf (46% of a deep page's CPU, perf). Here a page is
/// read as the positions of its rows, from one covering index with no table
/// access, and their bytes with one `pread` of the span that holds them: rows
/// are appended in id order, so a page's rows are usually side by side.
///
/// The file is derived data; the database stays the truth. Appends happen
/// only where one writer at a time is sure (SQLite: inside a write
/// transaction, which orders every appender and names each record's place in
/// the same transaction; a node's copy: its one keeper thread). Nothing is synced: each record starts with its item's id
/// and length, checked on every read, so a record a crash lost, a file that
/// was truncated (a sweep starts it again) or removed, only sends its row back
/// to being rendered from its item, and the store's opening forgets places past
/// the file's end so those rows are prepared again.
public final class RowLog: Sendable {
    /// Bytes before a record's prepared row: item id (8), row length (4), flags (1).
    public static let headerSize = 13
    /// A flag: the item has a picture.
    public static let pictured: UInt8 = 1

    private let file: PositionedFile
    public var path: String { file.path }

    /// A record to append: the prepared row (its templates' tag first) of item `id`.
    public struct Record {
        public var id: Int64
        public var hasPicture: Bool
        public var prepared: [UInt8]

        public init(id: Int64, hasPicture: Bool, prepared: [UInt8]) {
            (self.id, self.hasPicture, self.prepared) = (id, hasPicture, prepared)
        }
    }

    /// One record read back: the prepared row (tag first) and whether its item has a picture.
    public struct Found {
        public var prepared: UnsafeRawBufferPointer
        public var hasPicture: Bool
    }

    /// Opens (and creates, when missing) the file at `path`.
    public init(path: String) throws {
        file = try PositionedFile(path: path)
    }

    /// The file's length now.
    public var size: Int64 { file.size }

    /// Appends `records` at the end; answers each one's place and size, in
    /// order. Call it only where no other writer can append (above).
    public func append(_ records: [Record]) throws -> [(at: Int64, size: Int64)] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(records.reduce(0) { $0 + Self.headerSize + $1.prepared.count })
        var places: [(at: Int64, size: Int64)] = []
        let start = size
        for record in records {
            let at = start + Int64(bytes.count)
            withUnsafeBytes(of: record.id.littleEndian) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: UInt32(record.prepared.count).littleEndian) { bytes.append(contentsOf: $0) }
            bytes.append(record.hasPicture ? Self.pictured : 0)
            bytes.append(contentsOf: record.prepared)
            places.append((at, Int64(bytes.count) - (at - start)))
        }
        try file.write(bytes, at: start)
        return places
    }

    /// Empties the file (every record's place then reads as missing). Call it
    /// only where no other writer can append (above).
    public func truncate() throws {
        try file.truncate()
    }

    /// Reads `buffer.count` bytes from `at` into `buffer`; answers how many
    /// there were (fewer at the file's end).
    public func read(at: Int64, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        file.read(at: at, into: buffer)
    }

    /// The record of item `id` when `bytes` (read from its place, as long as
    /// its item says) hold it whole; nil otherwise.
    public static func record(in bytes: UnsafeRawBufferPointer, id: Int64) -> Found? {
        guard bytes.count > headerSize,
            Int64(littleEndian: bytes.loadUnaligned(as: Int64.self)) == id,
            Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self))) == bytes.count - headerSize
        else { return nil }
        return Found(prepared: UnsafeRawBufferPointer(rebasing: bytes[headerSize...]), hasPicture: bytes[12] & pictured != 0)
    }
}
