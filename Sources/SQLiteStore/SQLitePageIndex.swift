import Foundation
import GRDB
import GRDBSQLite

/// Where each item's row sits, by rank: a file beside the database
/// (`feed.sqlite-pages`), so a deep page is found without stepping SQLite.
///
/// Record `seq` (an item's rank from the oldest, dense from 1) sits at a
/// fixed place, `headerSize + (seq - 1) · recordSize`, and holds what the
/// covering index `item_page` gives a page: the item's id, date and preview,
/// and its prepared row's place in the row file. Page N of a feed of `count`
/// items is then one `pread` of the records from rank `count - (N-1)·size`
/// down, between two reads of the header: no statement, no transaction, no
/// B-tree.
///
/// The file is derived data, as the row file is; the database stays the
/// truth. Every write that changes a rank, a date, a preview or a row's
/// place rewrites those records from the item table inside its own write
/// transaction, which orders every writer (this process's and another
/// opening's). Readers and writers meet as in a sequence lock: a writer makes
/// the header's `generation` odd before it touches a record and even again
/// after, and a reader keeps what it read only when it saw the same even
/// generation before and after; otherwise it asks SQLite, as it always did.
///
/// Crashes: a writer that died between the two leaves the generation odd; one
/// whose transaction did not commit leaves a `stamp` the database does not
/// have (each write counts itself in `meta` under `pages` and writes that
/// count into the header). Either way the next opening, or the next write,
/// rebuilds the file from the item table; meanwhile readers ask SQLite. A
/// record is never trusted for another row's bytes: the row file's record
/// names its item, checked on every read.
final class SQLitePageIndex: Sendable {
    static let headerSize = 64
    static let recordSize = 40
    /// "WFPAGES1", little-endian: a file of another kind, or another layout, is rebuilt.
    static let magic: UInt64 = 0x3153_4547_4150_4657

    private let file: PositionedFile
    /// Each item's rank by its id (`path` + "-ranks": 8 bytes at `id · 8`),
    /// so a cursor's page is found without a search: written with the
    /// records, and trusted only when the record at that rank names the
    /// cursor's item and date.
    private let rankFile: PositionedFile
    /// The row file the records point into.
    private let rows: SQLiteRowLog

    /// The header: what a reader checks before and after it reads records.
    struct Header: Equatable {
        var magic: UInt64 = SQLitePageIndex.magic
        /// Odd while a writer is changing records (or died doing so).
        var generation: UInt64 = 0
        /// Records held: the feed's item count when the last writer finished.
        var count: Int64 = 0
        /// The store's `pages` count the records agree with.
        var stamp: Int64 = 0
        /// The store's `writes` count and the row file's size then: an
        /// earlier warmfeed, which keeps no index, moves one or the other
        /// with each write it makes, and the index is rebuilt.
        var writes: Int64 = 0
        var rowsSize: Int64 = 0
        /// The rank file's size then: one cut or removed since is rebuilt.
        var ranksSize: Int64 = 0

        /// Whether a reader may trust the records.
        var isSettled: Bool { magic == SQLitePageIndex.magic && generation & 1 == 0 && count >= 0 }
    }

    /// Where a page's row is, and what the page needs of its item: read from
    /// a record here, or from SQLite's covering index `item_page`.
    struct Place: Equatable {
        var id: Int64
        var published: Int64
        var seq: Int64
        var preview: Int64?
        /// Its prepared row's place in the row file; nil when it has none (or none a record could have).
        var at: Int64?
        var size: Int
        /// Whether the item names a place at all (prepared, as the store believes).
        var placed: Bool

        init(id: Int64, published: Int64, seq: Int64, preview: Int64?, at: Int64?, size: Int) {
            (self.id, self.published, self.seq, self.preview, self.at, self.size) = (id, published, seq, preview, at, size)
            placed = at != nil
            // A place no record could have is no place (and the row is prepared again).
            if !(0..<(1 << 48)).contains(at ?? 0) || !(SQLiteRowLog.headerSize...(1 << 24)).contains(size) { self.at = nil }
        }
    }

    /// Opens (and creates, when missing) the file at `path`, for the rows of `rows`.
    init(path: String, rows: SQLiteRowLog) throws {
        file = try PositionedFile(path: path)
        rankFile = try PositionedFile(path: path + "-ranks")
        self.rows = rows
    }

    // MARK: Reading

    /// The header as the file holds it now; nil when the file is too short.
    func header() -> Header? {
        withUnsafeTemporaryAllocation(byteCount: Self.headerSize, alignment: 8) { buffer -> Header? in
            guard file.read(at: 0, into: buffer) == Self.headerSize else { return nil }
            return Header(
                magic: UInt64(littleEndian: buffer.load(fromByteOffset: 0, as: UInt64.self)),
                generation: UInt64(littleEndian: buffer.load(fromByteOffset: 8, as: UInt64.self)),
                count: Int64(littleEndian: buffer.load(fromByteOffset: 16, as: Int64.self)),
                stamp: Int64(littleEndian: buffer.load(fromByteOffset: 24, as: Int64.self)),
                writes: Int64(littleEndian: buffer.load(fromByteOffset: 32, as: Int64.self)),
                rowsSize: Int64(littleEndian: buffer.load(fromByteOffset: 40, as: Int64.self)),
                ranksSize: Int64(littleEndian: buffer.load(fromByteOffset: 48, as: Int64.self)))
        }
    }

    /// The places of ranks `ranks(count)` (given the feed's item count, nil
    /// for no such ranks), highest rank first, with the count; nil when the
    /// file cannot be trusted now (a writer is at work, or died at work, or
    /// the file is not whole): the caller asks SQLite instead.
    func places(_ ranks: (Int64) -> ClosedRange<Int64>?) -> (count: Int64, places: [Place])? {
        guard let before = header(), before.isSettled else { return nil }
        guard let wanted = ranks(before.count) else { return (before.count, []) }
        guard wanted.lowerBound >= 1, wanted.upperBound <= before.count else { return nil }
        let length = Int(wanted.count) * Self.recordSize
        let places = withUnsafeTemporaryAllocation(byteCount: length, alignment: 8) { buffer -> [Place]? in
            guard file.read(at: Self.offset(of: wanted.lowerBound), into: buffer) == length else { return nil }
            var places: [Place] = []
            places.reserveCapacity(Int(wanted.count))
            for index in (0..<Int(wanted.count)).reversed() {
                places.append(Self.place(in: UnsafeRawBufferPointer(buffer), at: index * Self.recordSize, seq: wanted.lowerBound + Int64(index)))
            }
            return places
        }
        // Kept only when no writer began (or finished) meanwhile.
        guard let places, header() == before else { return nil }
        return (before.count, places)
    }

    /// The rank the rank file names for item `id`; nil when it names none.
    /// Read it inside `places`' `ranks` closure, and check the record.
    func rank(ofItem id: Int64) -> Int64? {
        guard (1..<Self.highestID).contains(id) else { return nil }
        return withUnsafeTemporaryAllocation(byteCount: 8, alignment: 8) { buffer -> Int64? in
            guard rankFile.read(at: id * 8, into: buffer) == 8 else { return nil }
            let rank = Int64(littleEndian: buffer.load(as: Int64.self))
            return rank >= 1 ? rank : nil
        }
    }

    /// Ids past this have no place in the rank file (their cursors' pages are
    /// asked of SQLite): 268 million items, a file of at most 2 GiB, sparse
    /// where ids are missing.
    private static let highestID: Int64 = 1 << 28

    private static func offset(of seq: Int64) -> Int64 {
        Int64(headerSize) + (seq - 1) * Int64(recordSize)
    }

    /// Record layout: id, published, preview, at (8 bytes each), size (4), flags (4).
    private static let hasPreview: UInt32 = 1
    private static let placed: UInt32 = 2

    private static func place(in bytes: UnsafeRawBufferPointer, at start: Int, seq: Int64) -> Place {
        func int64(_ offset: Int) -> Int64 { Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: start + offset, as: Int64.self)) }
        let flags = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: start + 36, as: UInt32.self))
        return Place(
            id: int64(0), published: int64(8), seq: seq,
            preview: flags & hasPreview != 0 ? int64(16) : nil,
            at: flags & placed != 0 ? int64(24) : nil,
            size: Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: start + 32, as: UInt32.self))))
    }

    private static func append(_ place: Place, to bytes: inout [UInt8]) {
        func put<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        put(place.id)
        put(place.published)
        put(place.preview ?? 0)
        put(place.at ?? 0)
        put(UInt32(clamping: place.size))
        put((place.preview != nil ? hasPreview : 0) | (place.at != nil ? placed : 0))
    }

    // MARK: Writing (inside a write transaction of the store)

    private func write(_ header: Header) throws {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.headerSize)
        let fields = [header.count, header.stamp, header.writes, header.rowsSize, header.ranksSize].map { UInt64(bitPattern: $0) }
        for value in [header.magic, header.generation] + fields {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }
        bytes.append(contentsOf: repeatElement(0, count: Self.headerSize - bytes.count))
        try file.write(bytes, at: 0)
    }

    /// Marks the file as not to be trusted until it is rebuilt (a write
    /// transaction that changed it did not commit). Best effort: when even
    /// this fails, the stamp still tells the next opening.
    func distrust() {
        var header = header() ?? Header()
        if header.generation & 1 == 0 { header.generation &+= 1 }
        try? write(header)
    }

    /// Whether the file agrees with the store as `db` sees it.
    func agrees(with db: Database) throws -> Bool {
        try agrees(pages: Self.count("pages", db), writes: Self.count("writes", db))
    }

    /// Whether the file agrees with a store whose `pages` and `writes`
    /// counts are these: settled, stamped with both and with the row file's
    /// size, and long enough for every record it counts.
    func agrees(pages: Int64, writes: Int64) -> Bool {
        guard let header = header(), header.isSettled, header.stamp == pages, header.writes == writes, header.rowsSize == rows.size else { return false }
        return file.size >= Self.offset(of: header.count + 1) && rankFile.size >= header.ranksSize
    }

    private static func count(_ key: String, _ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key]) ?? 0
    }

    /// Rewrites, from the item table as `db` sees it, the records of `ranks`
    /// and of every rank from `from` up, and the count. When the file did not
    /// agree with the store before (a crash, another opening's failed
    /// write, a file removed or cut), every record is rewritten instead.
    /// Counts the change in `meta`, in the same transaction.
    func refresh(_ db: Database, ranks: some Collection<Int64>, from: Int64?, whole: Bool = false) throws {
        let agreed = try !whole && agrees(with: db)
        var header = header() ?? Header()
        let stamp =
            try Int64.fetchOne(
                db,
                sql: """
                    INSERT INTO meta(key, value) VALUES ('pages', 1)
                    ON CONFLICT(key) DO UPDATE SET value = value + 1 RETURNING value
                    """) ?? 0
        header.magic = Self.magic
        header.generation = (header.generation | 1) &+ (header.generation & 1 == 0 ? 0 : 2)
        try write(header)
        let count = try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM item") ?? 0
        if !agreed {
            try rewrite(db, from: 1)
        } else {
            if let from { try rewrite(db, from: from) }
            let lone = ranks.filter { rank in from.map { rank < $0 } ?? true }
            if !lone.isEmpty {
                let statement = try db.cachedStatement(sql: Self.selectRank)
                for rank in Set(lone) where rank >= 1 && rank <= count {
                    try statement.setArguments([rank])
                    try rewrite(statement)
                }
            }
        }
        header.generation &+= 1
        header.count = count
        header.stamp = stamp
        header.writes = try Self.count("writes", db)
        header.rowsSize = rows.size
        header.ranksSize = rankFile.size
        try write(header)
    }

    /// Every record rewritten: the whole file from the item table.
    func rebuild(_ db: Database) throws {
        try refresh(db, ranks: [], from: nil, whole: true)
    }

    private static let selectFrom = "SELECT id, published, seq, preview, ahead_at, ahead_size FROM item WHERE seq >= ? ORDER BY seq"
    private static let selectRank = "SELECT id, published, seq, preview, ahead_at, ahead_size FROM item WHERE seq = ?"

    private func rewrite(_ db: Database, from: Int64) throws {
        let statement = try db.makeStatement(sql: Self.selectFrom)
        try statement.setArguments([max(1, from)])
        try rewrite(statement)
    }

    /// Writes the records of the rows `statement` steps through (ranks
    /// ascending), in runs of consecutive ranks.
    private func rewrite(_ statement: Statement) throws {
        let raw = statement.sqliteStatement
        defer { sqlite3_reset(raw) }
        var records = Runs(file: file, recordSize: Self.recordSize, base: Int64(Self.headerSize) - Int64(Self.recordSize))
        var written: [(id: Int64, rank: Int64)] = []
        while true {
            let step = sqlite3_step(raw)
            if step == SQLITE_DONE { break }
            guard step == SQLITE_ROW else {
                throw SQLitePageReader.Failure(description: "cannot read the item table: \(String(cString: sqlite3_errstr(step)))")
            }
            guard sqlite3_column_type(raw, 2) != SQLITE_NULL else { continue }
            let seq = sqlite3_column_int64(raw, 2)
            let at = sqlite3_column_type(raw, 4) == SQLITE_NULL ? nil : sqlite3_column_int64(raw, 4)
            let id = sqlite3_column_int64(raw, 0)
            written.append((id, seq))
            let place = Place(
                id: id, published: sqlite3_column_int64(raw, 1), seq: seq,
                preview: sqlite3_column_type(raw, 3) == SQLITE_NULL ? nil : sqlite3_column_int64(raw, 3),
                at: at, size: Int(sqlite3_column_int64(raw, 5)))
            try records.add(seq) { Self.append(place, to: &$0) }
        }
        try records.flush()
        // Each item's rank at its id's place in the rank file.
        var ranks = Runs(file: rankFile, recordSize: 8, base: 0)
        for (id, rank) in written.sorted(by: { $0.id < $1.id }) where (1..<Self.highestID).contains(id) {
            try ranks.add(id) { bytes in withUnsafeBytes(of: rank.littleEndian) { bytes.append(contentsOf: $0) } }
        }
        try ranks.flush()
    }

    /// Fixed-size records written by key (record `key` at `base + key · recordSize`),
    /// consecutive keys gathered into one `pwrite` of at most 1 MiB.
    private struct Runs {
        let file: PositionedFile
        let recordSize: Int
        let base: Int64
        private var bytes: [UInt8] = []
        private var start: Int64 = 0
        private var next: Int64 = 0

        init(file: PositionedFile, recordSize: Int, base: Int64) {
            (self.file, self.recordSize, self.base) = (file, recordSize, base)
        }

        /// Adds record `key`, its bytes appended by `record`.
        mutating func add(_ key: Int64, _ record: (inout [UInt8]) -> Void) throws {
            if key != next || bytes.count >= 1 << 20 {
                try flush()
                start = key
            }
            next = key + 1
            record(&bytes)
        }

        mutating func flush() throws {
            if !bytes.isEmpty { try file.write(bytes, at: base + start * Int64(recordSize)) }
            bytes.removeAll(keepingCapacity: true)
        }
    }
}
