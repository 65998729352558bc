/// A page read for serving from rows rendered ahead of time.
///
/// Each item's row is rendered once, when it is stored, by whoever serves the
/// feed (`RowPreparation`), and kept by the store, prefixed by the `tag` of
/// the templates it was rendered with: SQLite appends it to a file beside the
/// database (`SQLiteStore`'s `SQLiteRowLog`), PostgreSQL keeps it in a column of the item. A
/// page is then a range read of those bytes: the cold page's cost is copying
/// them, not decoding, escaping and templating thirty items. Rows whose bytes
/// are missing or of other templates come as whole items, rendered as before.
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
        /// empty when the row must be rendered from `item`.
        public var prepared: Range<Int>
        /// The whole item: for the page's first row (it names the page), and
        /// for rows not prepared with the tag asked for; nil otherwise.
        public var item: FeedItem?

        public init(id: Int64, preview: Int64?, hasPicture: Bool, prepared: Range<Int>, item: FeedItem?) {
            self.id = id
            self.preview = preview
            self.hasPicture = hasPicture
            self.prepared = prepared
            self.item = item
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

    public init(rows: [Row], bytes: [UInt8], total: Int, firstPosition: Int, older: Cursor?, newer: Cursor?) {
        self.rows = rows
        self.bytes = bytes
        self.total = total
        self.firstPosition = firstPosition
        self.older = older
        self.newer = newer
    }

    /// Whether a row with a picture has no preview yet.
    public var awaitingPreviews: Bool { rows.contains { $0.hasPicture && $0.preview == nil } }
}

/// What a backend reads of each row of a prepared page, in page order, to
/// make a `PreparedPage`: the same rules for every backend.
public struct PreparedPageBuilder {
    private var rows: [PreparedPage.Row] = []
    private var bytes: [UInt8] = []
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

    /// Whether the stored bytes `prepared` were rendered with this page's tag.
    public func isCurrent(_ prepared: UnsafeRawBufferPointer?) -> Bool {
        guard let prepared, prepared.count > 4 else { return false }
        return PreparedRowTag.read(prepared) == tag
    }

    /// Whether the next row is the page's first (it is then read whole).
    public var atFirstRow: Bool { rows.isEmpty }

    /// Adds a row: its prepared bytes when current (`item` then nil unless it is the first row), else its item.
    public mutating func add(
        id: Int64, published: Int64, seq: Int64, preview: Int64?, hasPicture: Bool,
        prepared: UnsafeRawBufferPointer?, item: FeedItem?
    ) {
        var range = 0..<0
        if let prepared, isCurrent(prepared) {
            let start = bytes.count
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: prepared[4...]))
            range = start..<bytes.count
        }
        rows.append(PreparedPage.Row(id: id, preview: preview, hasPicture: hasPicture, prepared: range, item: item))
        let place = (seq, Cursor(epoch: epoch, published: published, id: id))
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
            rows: rows, bytes: bytes, total: total, firstPosition: total - Int(first.seq) + 1,
            older: last.seq > 1 ? last.cursor : nil,
            newer: first.seq < Int64(total) ? first.cursor : nil
        )
    }
}

/// The four bytes before every prepared row: which templates rendered it.
public enum PreparedRowTag {
    /// `tag` as the four bytes that begin a stored row.
    public static func bytes(_ tag: UInt32) -> [UInt8] {
        withUnsafeBytes(of: tag.littleEndian) { Array($0) }
    }

    /// The tag a stored row begins with (it has at least four bytes).
    public static func read(_ prepared: UnsafeRawBufferPointer) -> UInt32 {
        UInt32(prepared[0]) | UInt32(prepared[1]) << 8 | UInt32(prepared[2]) << 16 | UInt32(prepared[3]) << 24
    }
}
