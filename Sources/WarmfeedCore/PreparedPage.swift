import Gzip

/// A page read for serving from rows rendered ahead of time.
///
/// Each item's row is rendered once, when it is stored, by whoever serves the
/// feed (`RowPreparation`), and kept by the store, prefixed by the `tag` of
/// the templates it was rendered with: SQLite appends it to a file beside the
/// database (`SQLiteStore`'s `SQLiteRowLog`), PostgreSQL keeps it in a column of the item. A
/// page is then a range read of those bytes: the cold page's cost is copying
/// them, not decoding, escaping and templating thirty items. Rows whose bytes
/// are missing or of other templates come as whole items, rendered as before;
/// so do rows whose stored bytes are corrupt (`PreparedRowTag`'s check), and
/// their ids are named in `corrupt`, to be prepared again.
public struct PreparedPage: Sendable {
    /// One row of the page.
    public struct Row: Sendable {
        /// The item's id.
        public var id: Int64
        /// Its picture's preview, filled in at the row's hole when the page is served.
        public var preview: Int64?
        /// Whether it has a picture (so a missing preview may yet come).
        public var hasPicture: Bool
        /// Where its prepared bytes (without the tag) sit in `PreparedPage.bytes`;
        /// empty when the row must be rendered from its item.
        public var prepared: Range<Int>
        /// Where its whole item sits in `PreparedPage.items`, for a row not
        /// prepared with the tag asked for; nil otherwise.
        public var itemIndex: Int?

        public init(id: Int64, preview: Int64?, hasPicture: Bool, prepared: Range<Int>, itemIndex: Int?) {
            self.id = id
            self.preview = preview
            self.hasPicture = hasPicture
            self.prepared = prepared
            self.itemIndex = itemIndex
        }
    }

    /// The rows, newest first.
    public var rows: [Row]
    /// The prepared rows' bytes, back to back.
    public var bytes: [UInt8]
    /// How many items the whole feed holds.
    public var total: Int
    /// The 1-based position of the first row from the top.
    public var firstPosition: Int
    /// Where the next (older) page starts; nil at the end.
    public var older: Cursor?
    /// Where the previous (newer) page ends; nil at the top.
    public var newer: Cursor?
    /// The rows whose stored bytes were corrupt (rendered from their items here).
    public var corrupt: [Int64]
    /// The items of the rows rendered from their items, which each such row
    /// names (`Row.itemIndex`): a row's one way to its item, whether the page
    /// was read from a store (the few rows not rendered ahead) or made of
    /// items (`init(_: Page)`: every row, the page's own array, not copied).
    public var items: [FeedItem]

    /// Makes a page (`PreparedPageBuilder` does, for the backends).
    public init(
        rows: [Row], bytes: [UInt8], items: [FeedItem] = [], total: Int, firstPosition: Int, older: Cursor?, newer: Cursor?, corrupt: [Int64] = []
    ) {
        assert(rows.allSatisfy { $0.itemIndex.map { items.indices.contains($0) } ?? true }, "a row names an item the page lacks")
        self.rows = rows
        self.bytes = bytes
        self.items = items
        self.total = total
        self.firstPosition = firstPosition
        self.older = older
        self.newer = newer
        self.corrupt = corrupt
    }

    /// The item `row` is rendered from; nil when it has prepared bytes.
    public func item(of row: Row) -> FeedItem? {
        row.itemIndex.map { items[$0] }
    }

    /// Whether a row with a picture has no preview yet.
    public var awaitingPreviews: Bool { rows.contains { $0.hasPicture && $0.preview == nil } }

    /// `page` with every row to be rendered from its item: the one shape a
    /// page is rendered from, whether its rows were rendered ahead or not.
    /// The items stay in `items` (the page's own array, shared).
    public init(_ page: Page) {
        self.init(
            rows: page.items.enumerated().map { Row(id: $1.id ?? 0, preview: $1.preview, hasPicture: $1.imageURL != nil, prepared: 0..<0, itemIndex: $0) },
            bytes: [], items: page.items, total: page.total, firstPosition: page.firstPosition, older: page.older, newer: page.newer)
    }
}

/// What a backend reads of each row of a prepared page, in page order, to
/// make a `PreparedPage`: the same rules for every backend.
public struct PreparedPageBuilder {
    private var rows: [PreparedPage.Row] = []
    private var bytes: [UInt8] = []
    private var items: [FeedItem] = []
    private var corrupt: [Int64] = []
    private var first: (seq: Int64, cursor: Cursor)?
    private var last: (seq: Int64, cursor: Cursor)?
    private let tag: UInt32
    private let epoch: UInt32

    public init(tag: UInt32, epoch: UInt32, capacity: Int) {
        self.tag = tag
        self.epoch = epoch
        rows.reserveCapacity(capacity)
        bytes.reserveCapacity(capacity * 768)
    }

    /// A builder whose rows' bytes lie in `bytes` already (a page's records
    /// read from a row file at once): each current row is taken where it
    /// lies, with no copy. Its rows are added with `add(…, within:)`.
    public init(tag: UInt32, epoch: UInt32, capacity: Int, holding bytes: [UInt8]) {
        self.tag = tag
        self.epoch = epoch
        rows.reserveCapacity(capacity)
        self.bytes = bytes
    }

    /// What the stored bytes `prepared` are worth to this page (nil: none stored).
    public func check(_ prepared: UnsafeRawBufferPointer?) -> PreparedRowTag.Check {
        guard let prepared else { return .missing }
        return PreparedRowTag.check(prepared, tag: tag)
    }

    /// Adds a row: its prepared bytes when `row` is current (`item` then
    /// nil), else its item. A corrupt row's id is noted.
    public mutating func add(
        id: Int64, published: Int64, seq: Int64, preview: Int64?, hasPicture: Bool,
        row: PreparedRowTag.Check, item: FeedItem?
    ) {
        var range = 0..<0
        switch row {
        case .current(let body):
            let start = bytes.count
            bytes.append(contentsOf: body)
            range = start..<bytes.count
        case .corrupt: corrupt.append(id)
        case .missing, .otherTemplates: break
        }
        var itemIndex: Int?
        if let item {
            itemIndex = items.count
            items.append(item)
        }
        append(PreparedPage.Row(id: id, preview: preview, hasPicture: hasPicture, prepared: range, itemIndex: itemIndex), published: published, seq: seq)
    }

    /// Adds a row of a builder `holding` its bytes: `held` is those bytes
    /// (the same array's), and a current row's body lies within them.
    public mutating func add(
        id: Int64, published: Int64, seq: Int64, preview: Int64?, hasPicture: Bool,
        row: PreparedRowTag.Check, within held: UnsafeRawBufferPointer
    ) {
        var range = 0..<0
        switch row {
        case .current(let body):
            let start = held.baseAddress.flatMap { base in body.baseAddress.map { $0 - base } } ?? -1
            precondition(held.count == bytes.count && start >= 0 && start + body.count <= held.count, "a row outside the bytes held")
            range = start..<(start + body.count)
        case .corrupt: corrupt.append(id)
        case .missing, .otherTemplates: break
        }
        append(PreparedPage.Row(id: id, preview: preview, hasPicture: hasPicture, prepared: range, itemIndex: nil), published: published, seq: seq)
    }

    private mutating func append(_ row: PreparedPage.Row, published: Int64, seq: Int64) {
        rows.append(row)
        let place = (seq, Cursor(epoch: epoch, published: published, id: row.id))
        if first == nil { first = place }
        last = place
    }

    /// Puts the rows read newest last (a "newer items" page) in page order.
    public mutating func reverse() {
        rows.reverse()
        swap(&first, &last)
    }

    /// The page, in a feed of `total` items; nil when no row was read.
    public func page(total: Int) -> PreparedPage? {
        guard let first, let last else { return nil }
        return PreparedPage(
            rows: rows, bytes: bytes, items: items, total: total, firstPosition: total - Int(first.seq) + 1,
            older: last.seq > 1 ? last.cursor : nil,
            newer: first.seq < Int64(total) ? first.cursor : nil,
            corrupt: corrupt
        )
    }
}

/// The eight bytes before every prepared row: which templates rendered it
/// (four bytes), and the CRC-32 of the row's bytes after them (four), so a
/// row whose stored bytes were flipped or cut is told from a good one.
public enum PreparedRowTag {
    /// Bytes before the row.
    public static let headerSize = 8

    /// What stored bytes are worth to a page of templates `tag`.
    public enum Check {
        /// None stored.
        case missing
        /// A row of other templates (intact or not): the sweep renders it again.
        case otherTemplates
        /// A row of these templates whose bytes do not match their check: corrupt.
        case corrupt
        /// A good row of these templates: its bytes after the header.
        case current(UnsafeRawBufferPointer)

        /// Whether the row's bytes can be served.
        public var isCurrent: Bool {
            if case .current = self { return true }
            return false
        }
    }

    /// `tag` as the four bytes that begin a stored row.
    public static func bytes(_ tag: UInt32) -> [UInt8] {
        withUnsafeBytes(of: tag.littleEndian) { Array($0) }
    }

    /// `row` (rendered by templates `tag`) as it is stored: the tag, the
    /// row's CRC-32, the row.
    public static func seal(_ row: [UInt8], tag: UInt32) -> [UInt8] {
        var sealed = bytes(tag)
        sealed.reserveCapacity(headerSize + row.count)
        let check = row.withUnsafeBytes { Gzip.crc32($0) }
        withUnsafeBytes(of: check.littleEndian) { sealed.append(contentsOf: $0) }
        sealed.append(contentsOf: row)
        return sealed
    }

    /// Stored bytes read back, for a page of templates `tag`. Bytes too
    /// short to hold a tag are corrupt: nothing stores fewer than eight.
    public static func check(_ prepared: UnsafeRawBufferPointer, tag: UInt32) -> Check {
        guard prepared.count >= 4 else { return .corrupt }
        guard word(prepared, at: 0) == tag else { return .otherTemplates }
        guard prepared.count > headerSize else { return .corrupt }
        let row = UnsafeRawBufferPointer(rebasing: prepared[headerSize...])
        return Gzip.crc32(row) == word(prepared, at: 4) ? .current(row) : .corrupt
    }

    /// The little-endian word at `offset` (the caller checked there are four bytes).
    private static func word(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
}
