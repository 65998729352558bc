/// Where the feed lives: items in order, read by keyset cursor or page
/// number, written in one transaction per import.
///
/// Routes, pre-warm, thumbnails and imports reach the store only through
/// this protocol; `SQLiteFeedStore` (one file in the data folder) is the
/// embedded default, and another backend plugs in here without touching them.
public protocol FeedStore: Sendable {
    /// The feed's epoch: a random number fixed when the store was created.
    /// Cursors carry it, so a cursor from another feed is told apart.
    var epoch: UInt32 { get }

    /// Changes whenever the items change (a write here, or one noticed from
    /// elsewhere); anything derived from the items (rendered pages) is keyed by it.
    var revision: Int { get }

    /// How many items the feed holds.
    func count() throws -> Int

    /// The page for `request`, `size` items long; nil when no such page exists
    /// (a page number past the end, a cursor with nothing after it).
    func page(_ request: PageRequest, size: Int) throws -> Page?

    /// The item with `id`, or nil.
    func item(id: Int64) throws -> FeedItem?

    /// The cursor that names `item`.
    func cursor(of item: FeedItem) -> Cursor

    /// Runs `body` in one write transaction: every item it writes lands, or
    /// (when it throws) none does and the store is as it was.
    func write<Result>(_ body: (inout FeedWriter) throws -> Result) throws -> (Result, UpsertSummary)

    /// A value kept in the store beside the items (the source's validators, say), or nil.
    func note(_ key: String) -> String?

    /// Keeps `value` under `key` beside the items (nil removes it).
    func setNote(_ key: String, _ value: String?) throws

    /// Keeps each item's picture preview (id → preview); not a change of the
    /// feed (the revision stays).
    func setPreviews(_ previews: [Int64: Int64]) throws

    /// Looks whether another process wrote to the store since the last look,
    /// and moves `revision` if so. Cheap; the server calls it every second.
    func noticeOtherWriters()
}

extension FeedStore {
    /// Inserts new items and updates changed ones, keyed by guid, in one
    /// transaction: either all of them land or none does.
    @discardableResult
    public func upsert(_ items: [FeedItem]) throws -> UpsertSummary {
        try write { writer in
            for item in items { try writer.upsert(item) }
        }.1
    }
}

/// What a backend writes items through, inside its one transaction.
public protocol FeedItemSink: AnyObject {
    /// Inserts `item`, or updates the item with its guid when something changed.
    /// With `keepStoredDate`, an item already stored keeps its date.
    func upsert(_ item: FeedItem, keepStoredDate: Bool) throws
    /// What the write did so far.
    var summary: UpsertSummary { get }
}

/// Writes items inside one transaction, one at a time, so a source of any
/// size streams into the store without being held in memory. Only a store's
/// `write(_:)` makes one, and it cannot outlive that call.
public struct FeedWriter: ~Copyable {
    private let sink: any FeedItemSink

    /// A writer over a backend's sink (for `FeedStore` implementations).
    public init(sink: any FeedItemSink) {
        self.sink = sink
    }

    /// Inserts `item`, or updates the item with its guid when something changed.
    /// With `keepStoredDate`, an item already stored keeps its date (the source
    /// gave none, and a guessed date must not move it on every import).
    public mutating func upsert(_ item: FeedItem, keepStoredDate: Bool = false) throws {
        try sink.upsert(item, keepStoredDate: keepStoredDate)
    }

    /// What the write did so far.
    public var summary: UpsertSummary { sink.summary }
}

/// What one write did.
public struct UpsertSummary: Sendable, Equatable {
    /// Items that were new.
    public var inserted = 0
    /// Items already present (same guid) whose content changed.
    public var updated = 0
    /// Items already present and unchanged.
    public var unchanged = 0
    /// Items whose guid came twice in the same write (the later one wins).
    public var repeated = 0

    /// An empty summary.
    public init() {}
}

