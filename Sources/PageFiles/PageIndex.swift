import Foundation
import Synchronization

/// Where each item's row sits, by rank: a file beside the store (SQLite's
/// `feed.sqlite-pages`, a PostgreSQL node's copy), so a deep page is found
/// without stepping a SQL engine.
///
/// Record `seq` (an item's rank from the oldest, dense from 1) sits at a
/// fixed place, `headerSize + (seq - 1) · recordSize`, and holds what a page
/// needs of its item: the item's id, date and preview, and its prepared row's
/// place in the row file (`RowLog`). Page N of a feed of `count` items is then
/// one `pread` of the records from rank `count - (N-1)·size` down, between
/// two reads of the header: no statement, no transaction, no B-tree.
///
/// The file is derived data, as the row file is; the store stays the truth.
/// One writer at a time changes it (the store orders its writers: SQLite's
/// write transaction, a node copy's one keeper thread). Readers and writers
/// meet as in a sequence lock: a writer makes the header's `generation` odd
/// (`begin`) before it touches a record and even again after (`finish`), and
/// a reader keeps what it read only when it saw the same even generation
/// before and after; otherwise it asks the store, as it always did.
///
/// A writer that died between the two leaves the generation odd, and the
/// header's `stamp` and `writes` say which state of the store the records
/// agree with: a store that finds them odd or other than its own rebuilds the
/// file. A record is never trusted for another row's bytes: the row file's
/// record names its item, checked on every read.
public final class PageIndex: Sendable {
    public static let headerSize = 64
    public static let recordSize = 40
    /// "WFPAGES1", little-endian: a file of another kind, or another layout, is rebuilt.
    static let magic: UInt64 = 0x3153_4547_4150_4657

    private let file: PositionedFile
    /// Each item's rank by its id (`path` + "-ranks": 8 bytes at `id · 8`),
    /// so a cursor's page is found without a search: written with the
    /// records, and trusted only when the record at that rank names the
    /// cursor's item and date.
    private let rankFile: PositionedFile
    /// The row file the records point into.
    public let rows: RowLog

    /// The header: what a reader checks before and after it reads records.
    public struct Header: Equatable, Sendable {
        var magic: UInt64 = PageIndex.magic
        /// Odd while a writer is changing records (or died doing so).
        public var generation: UInt64 = 0
        /// Records held: the feed's item count when the last writer finished.
        public var count: Int64 = 0
        /// The store's own count of the state the records agree with (SQLite:
        /// its `pages` count; a node copy: where its next catch-up starts).
        public var stamp: Int64 = 0
        /// The store's `writes` count then: SQLite's (an earlier warmfeed,
        /// which keeps no index, moves it or the row file's size with each
        /// write it makes, and the index is rebuilt); a node copy's, the
        /// feed's write count it has caught up with.
        public var writes: Int64 = 0
        /// The row file's size then.
        public var rowsSize: Int64 = 0
        /// The rank file's size then: one cut or removed since is rebuilt.
        public var ranksSize: Int64 = 0
        /// Which store the records are of (a node copy: the feed's epoch; SQLite: 0).
        public var origin: Int64 = 0

        public init() {}

        var fields: [Int64] {
            [Int64(bitPattern: magic), Int64(bitPattern: generation), count, stamp, writes, rowsSize, ranksSize, origin]
        }

        /// Whether a reader may trust the records.
        public var isSettled: Bool { magic == PageIndex.magic && generation & 1 == 0 && count >= 0 }
    }

    /// Where a page's row is, and what the page needs of its item: read from
    /// a record here, or from the store's own index.
    public struct Place: Equatable, Sendable {
        public var id: Int64
        public var published: Int64
        public var seq: Int64
        public var preview: Int64?
        /// Its prepared row's place in the row file; nil when it has none (or none a record could have).
        public var at: Int64?
        public var size: Int
        /// Whether the item names a place at all (prepared, as the store believes).
        public var placed: Bool

        public init(id: Int64, published: Int64, seq: Int64, preview: Int64?, at: Int64?, size: Int) {
            (self.id, self.published, self.seq, self.preview, self.at, self.size) = (id, published, seq, preview, at, size)
            placed = at != nil
            // A place no record could have is no place (and the row is prepared again).
            if !(0..<(1 << 48)).contains(at ?? 0) || !(RowLog.headerSize...(1 << 24)).contains(size) { self.at = nil }
        }
    }

    /// Opens (and creates, when missing) the file at `path`, for the rows of `rows`.
    public init(path: String, rows: RowLog) throws {
        file = try PositionedFile(path: path)
        rankFile = try PositionedFile(path: path + "-ranks")
        self.rows = rows
    }

    public var path: String { file.path }

    /// The generation and count of the last settled header a read found:
    /// a page read takes them in place of a first read of the header. The
    /// header it reads after the records must show that same generation, and
    /// a generation never comes back (every write raises it: `begin`,
    /// `finish`, `distrust`), so no writer began since they were seen, and the
    /// two, even read apart, were one header's. Written only when they change
    /// (a write), so readers on every thread share them without writing.
    private let seenGeneration = Atomic<UInt64>(1)
    private let seenCount = Atomic<Int64>(0)

    // MARK: Reading

    /// The header as the file holds it now; nil when the file is too short.
    public func header() -> Header? {
        withUnsafeTemporaryAllocation(byteCount: Self.headerSize, alignment: 8) { buffer -> Header? in
            guard file.read(at: 0, into: buffer) == Self.headerSize else { return nil }
            func field(_ index: Int) -> Int64 { Int64(littleEndian: buffer.load(fromByteOffset: index * 8, as: Int64.self)) }
            var header = Header()
            header.magic = UInt64(bitPattern: field(0))
            header.generation = UInt64(bitPattern: field(1))
            (header.count, header.stamp, header.writes, header.rowsSize, header.ranksSize, header.origin) =
                (field(2), field(3), field(4), field(5), field(6), field(7))
            return header
        }
    }

    /// The places of ranks `ranks(count)` (given the feed's item count, nil
    /// for no such ranks), highest rank first, with the count; nil when the
    /// file cannot be trusted now (a writer is at work, or died at work, the
    /// file is not whole, or `trusts` refuses its header): the caller asks
    /// the store instead.
    public func places(
        trusts: (Header) -> Bool = { _ in true }, _ ranks: (Int64) -> ClosedRange<Int64>?
    ) -> (count: Int64, places: [Place])? {
        // The header last seen settled, when there is one; a mismatch after (a
        // write since) is read again from the file, once.
        let seen = seenGeneration.load(ordering: .relaxed)
        if seen & 1 == 0, let found = places(generation: seen, count: seenCount.load(ordering: .relaxed), trusts: trusts, ranks) {
            return found
        }
        guard let before = header(), before.isSettled, trusts(before) else { return nil }
        return places(generation: before.generation, count: before.count, trusts: trusts, ranks)
    }

    /// `places`, with the header's generation and count as read before:
    /// nil when the header after differs, or `trusts` refuses it.
    private func places(
        generation: UInt64, count: Int64, trusts: (Header) -> Bool, _ ranks: (Int64) -> ClosedRange<Int64>?
    ) -> (count: Int64, places: [Place])? {
        func unchanged() -> Bool {
            guard let after = header(), after.isSettled else { return false }
            if after.generation != seenGeneration.load(ordering: .relaxed) {
                seenCount.store(after.count, ordering: .relaxed)
                seenGeneration.store(after.generation, ordering: .relaxed)
            }
            return after.generation == generation && after.count == count && trusts(after)
        }
        guard let wanted = ranks(count) else { return unchanged() ? (count, []) : nil }
        guard wanted.lowerBound >= 1, wanted.upperBound <= count else { return nil }
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
        guard let places, unchanged() else { return nil }
        return (count, places)
    }

    /// The rank the rank file names for item `id`; nil when it names none.
    /// Read it inside `places`' `ranks` closure, and check the record.
    public func rank(ofItem id: Int64) -> Int64? {
        guard (1..<Self.highestID).contains(id) else { return nil }
        return withUnsafeTemporaryAllocation(byteCount: 8, alignment: 8) { buffer -> Int64? in
            guard rankFile.read(at: id * 8, into: buffer) == 8 else { return nil }
            let rank = Int64(littleEndian: buffer.load(as: Int64.self))
            return rank >= 1 ? rank : nil
        }
    }

    /// Whether the file agrees with a store whose own counts are `stamp` and
    /// `writes`: settled, stamped with both and with the row file's size, and
    /// long enough for every record it counts.
    public func agrees(stamp: Int64, writes: Int64) -> Bool {
        guard let header = header(), header.isSettled, header.stamp == stamp, header.writes == writes else { return false }
        return isWhole(header)
    }

    /// Whether the files hold everything `header` counts: the row file as
    /// long as it was, every record, the rank file as long as it was.
    public func isWhole(_ header: Header) -> Bool {
        header.rowsSize == rows.size && file.size >= Self.offset(of: header.count + 1) && rankFile.size >= header.ranksSize
    }

    /// The bytes of the row file the records point at (their rows' sizes
    /// summed), read through every record: what a copy of the row file
    /// holding only current rows would take. For the writer, between its
    /// changes (a reader's use would race them); nil when the file is short.
    public func liveRowBytes() -> Int64? {
        guard let header = header() else { return nil }
        var total: Int64 = 0
        var next: Int64 = 1
        let chunk: Int64 = 16_384
        while next <= header.count {
            let wanted = min(chunk, header.count - next + 1)
            let length = Int(wanted) * Self.recordSize
            let sum = withUnsafeTemporaryAllocation(byteCount: length, alignment: 8) { buffer -> Int64? in
                guard file.read(at: Self.offset(of: next), into: buffer) == length else { return nil }
                var sum: Int64 = 0
                for index in 0..<Int(wanted) {
                    let place = Self.place(in: UnsafeRawBufferPointer(buffer), at: index * Self.recordSize, seq: next + Int64(index))
                    if place.at != nil { sum += Int64(place.size) }
                }
                return sum
            }
            guard let sum else { return nil }
            total += sum
            next += wanted
        }
        return total
    }

    /// Ids past this have no place in the rank file (their cursors' pages are
    /// asked of the store): 268 million items, a file of at most 2 GiB,
    /// sparse where ids are missing.
    static let highestID: Int64 = 1 << 28

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

    // MARK: Writing (by the store's one writer at a time)

    /// Starts a change: the header's generation made odd (readers then ask
    /// the store) and the header returned, to be given to `finish`.
    public func begin() throws -> Header {
        var header = header() ?? Header()
        header.magic = Self.magic
        header.generation = (header.generation | 1) &+ (header.generation & 1 == 0 ? 0 : 2)
        try write(header)
        return header
    }

    /// Ends a change begun with `begin`: `header` (its counts set by the
    /// caller) written with an even generation and the files' sizes now.
    public func finish(_ header: Header) throws {
        var header = header
        header.generation |= 1
        header.generation &+= 1
        header.rowsSize = rows.size
        header.ranksSize = rankFile.size
        try write(header)
    }

    /// Marks the file as not to be trusted until it is rebuilt (a change
    /// that did not reach the store). Best effort: when even this fails, the
    /// stamp still tells the store.
    public func distrust() {
        var header = header() ?? Header()
        if header.generation & 1 == 0 { header.generation &+= 1 }
        try? write(header)
    }

    /// Empties the records and the rank file, for a rebuild from nothing
    /// (between `begin` and `finish`).
    public func truncate() throws {
        try rankFile.truncate()
        var header = header() ?? Header()
        header.count = 0
        try write(header)
    }

    private func write(_ header: Header) throws {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.headerSize)
        for value in header.fields {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }
        bytes.append(contentsOf: repeatElement(0, count: Self.headerSize - bytes.count))
        try file.write(bytes, at: 0)
    }

    /// Writes records (between `begin` and `finish`): each place at its
    /// rank, and its rank at its item's id in the rank file, consecutive
    /// ranks gathered into one `pwrite`. Add the places in any order; ranks
    /// ascending write fewest times.
    public func records() -> Recorder { Recorder(index: self) }

    public struct Recorder {
        let index: PageIndex
        private var records: Runs
        private var written: [(id: Int64, rank: Int64)] = []

        init(index: PageIndex) {
            self.index = index
            records = Runs(file: index.file, recordSize: PageIndex.recordSize, base: Int64(PageIndex.headerSize) - Int64(PageIndex.recordSize))
        }

        /// Adds the record of `place` (at `place.seq`, which must be 1 or more).
        public mutating func add(_ place: Place) throws {
            precondition(place.seq >= 1)
            written.append((place.id, place.seq))
            try records.add(place.seq) { PageIndex.append(place, to: &$0) }
        }

        /// Writes what is gathered: the records, then each item's rank.
        public mutating func flush() throws {
            try records.flush()
            var ranks = Runs(file: index.rankFile, recordSize: 8, base: 0)
            for (id, rank) in written.sorted(by: { $0.id < $1.id }) where (1..<PageIndex.highestID).contains(id) {
                try ranks.add(id) { bytes in withUnsafeBytes(of: rank.littleEndian) { bytes.append(contentsOf: $0) } }
            }
            try ranks.flush()
            written.removeAll(keepingCapacity: true)
        }
    }

    /// Fixed-size records written by key (record `key` at `base + key · recordSize`),
    /// consecutive keys gathered into one `pwrite` of at most 1 MiB.
    struct Runs {
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
