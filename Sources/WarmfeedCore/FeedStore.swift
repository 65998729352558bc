import Foundation
import Workers

/// Where the feed lives: items in order, read by keyset cursor or page
/// number, written in one transaction per import.
///
/// Routes, pre-warm, thumbnails and imports reach the store only through
/// this protocol; `SQLiteFeedStore` (one file in the data folder) is the
/// embedded default, `PostgresFeedStore` the shared one for several servers,
/// and no caller knows which one it talks to.
///
/// Reads are `async`: a store across the network answers later, and a caller
/// waits without holding a thread. A write streams items from a synchronous
/// parser, so its body is synchronous and `write` blocks the calling thread:
/// call it from a thread of your own (the importer does), not from the
/// cooperative pool's few threads for long.
public protocol FeedStore: Sendable {
    /// The feed's epoch: a random number fixed when the store was created.
    /// Cursors carry it, so a cursor from another feed is told apart.
    var epoch: UInt32 { get }

    /// Changes whenever the items change (a write here, or one noticed from
    /// elsewhere); anything derived from the items (rendered pages) is keyed by it.
    var revision: Int { get }

    /// How many items the feed holds.
    func count() async throws -> Int

    /// The page for `request`, `size` items long; nil when no such page exists
    /// (a page number past the end, a cursor with nothing after it).
    func page(_ request: PageRequest, size: Int) async throws -> Page?

    /// The item with `id`, or nil.
    func item(id: Int64) async throws -> FeedItem?

    /// The page for `request` with its rows' prepared bytes of `tag` (see
    /// `PreparedPage`); nil when no such page exists.
    func preparedPage(_ request: PageRequest, size: Int, tag: UInt32) async throws -> PreparedPage?

    /// `preparedPage(_:size:tag:)` read on this thread, when the store holds
    /// the page where nothing need be waited for (a PostgreSQL node's copy
    /// of the feed): `.some(nil)` when no such page exists; nil when it
    /// cannot answer so, and `preparedPage` is awaited. None by default.
    func preparedPageWithoutWaiting(_ request: PageRequest, size: Int, tag: UInt32) throws -> PreparedPage??

    /// Renders and keeps the rows of up to `limit` items that need it, from
    /// where the last batch ended (`id`: the `last` it answered; 0 at first):
    /// with `sweep`, every row (a walk over the whole feed, which a store
    /// keeping rows in a file beside it lays out in page order); without,
    /// only those not prepared since their item was last written (an index
    /// read), in id order. One transaction a batch, holding its items: a
    /// write of them waits for it, and another node's pass skips them, so
    /// each row is rendered once. `render` gives a row's bytes (the tag
    /// first), or nil to leave it. Answers how many rows were kept and where
    /// the next batch starts; nil when no item needed it. Not a change of
    /// the feed: the revision stays.
    func prepareRows(
        tag: UInt32, sweep: Bool, after id: Int64, limit: Int, render: @escaping @Sendable (FeedItem) -> [UInt8]?
    ) async throws -> (kept: Int, last: Int64)?

    /// How many reads of the file its prepared rows are kept in most pages
    /// of `size` rows take (the median of pages sampled across the feed; 1:
    /// rows in page order); nil for a store that keeps no such file, or
    /// cannot tell now. A sweep (`prepareRows`) lays them in order again.
    func rowReadsPerPage(size: Int) async -> Double?

    /// Forgets the prepared rows of the items `ids` (found corrupt when a
    /// page read them), so the next `prepareRows` without a sweep renders
    /// them again. Not a change of the feed: the revision stays.
    func forgetPreparedRows(_ ids: [Int64]) async throws

    /// Runs `body` in one write transaction: every item it writes lands, or
    /// (when it throws) none does and the store is as it was. Blocks the
    /// calling thread until the transaction ends.
    func write<Result>(_ body: (inout FeedWriter) throws -> Result) throws -> (Result, UpsertSummary)

    /// Every source the store keeps (a small table: one row a listed feed).
    func sources() async throws -> [SourceEntry]

    /// A value kept in the store beside the items (the source's validators, say), or nil.
    func note(_ key: String) async throws -> String?

    /// Keeps `value` under `key` beside the items (nil removes it).
    func setNote(_ key: String, _ value: String?) async throws

    /// Keeps each item's picture preview (id → preview); not a change of the
    /// feed (the revision stays).
    func setPreviews(_ previews: [Int64: Int64]) async throws

    /// The store's own long-lived work until graceful shutdown: hearing of
    /// writes made elsewhere (moving `revision` within a second), and keeping
    /// its connections. The server runs it as a service.
    func run() async

    /// This process's part of the polling now, among the processes sharing
    /// the store (`PollingShare`): each host's sources are polled by one of
    /// them, and one reads the lists. Nil when it may poll nothing (it cannot
    /// reach the store to take a place). A process that dies lets its place
    /// go, and the others take its hosts at their next ask.
    func pollingShare() async -> PollingShare?

    /// What the store is and whether it answers, for the admin view.
    var status: StoreStatus { get }

    /// Lets go of connections and files; the store is not used after.
    func close() async
}

/// A store that reads a page at once on the caller's thread, with nothing
/// that waits on a network or on another thread (an embedded database): a
/// cold page is then read and rendered on the server thread that asked, with
/// no hop to another thread and back (a tenth of the CPU of random deep pages
/// went to those hand-offs).
public protocol ImmediatePages: FeedStore {
    /// The page for `request`, `size` items long, read on this thread; nil
    /// when no such page exists.
    func pageAtOnce(_ request: PageRequest, size: Int) throws -> Page?

    /// `preparedPage(_:size:tag:)`, read on this thread.
    func preparedPageAtOnce(_ request: PageRequest, size: Int, tag: UInt32) throws -> PreparedPage?
}

extension FeedStore {
    public func preparedPageWithoutWaiting(_ request: PageRequest, size: Int, tag: UInt32) throws -> PreparedPage?? { nil }

    public func rowReadsPerPage(size: Int) async -> Double? { nil }

    /// The cursor that names `item`.
    public func cursor(of item: FeedItem) -> Cursor {
        Cursor(epoch: epoch, published: item.published, id: item.id ?? 0)
    }

    /// `write(_:)` on a thread for long jobs (`WorkerPool.longJobs`), for
    /// async callers: the transaction may take seconds and must not hold one
    /// of the cooperative pool's threads.
    public func writeOffPool<Result: Sendable>(
        _ body: @escaping @Sendable (inout FeedWriter) throws -> Result
    ) async throws -> (Result, UpsertSummary) {
        try await WorkerPool.longJobs.perform(cancelled: .failure(CancellationError())) {
            Swift.Result { try self.write(body) }
        }.get()
    }
}

/// What the admin view says of the store.
public struct StoreStatus: Sendable, Equatable {
    /// The backend: "sqlite" or "postgresql".
    public var backend: String
    /// Where it is, without a password: a file path or host:port/database.
    public var location: String
    /// Whether it answered its last query (a store down serves cached pages only).
    public var answering: Bool
    /// Why it does not answer, when it does not.
    public var problem: String?

    /// A PostgreSQL node's own copy of the feed's prepared rows, when it keeps one.
    public var copy: Copy?

    /// Makes a status.
    public init(backend: String, location: String, answering: Bool = true, problem: String? = nil, copy: Copy? = nil) {
        self.backend = backend
        self.location = location
        self.answering = answering
        self.problem = problem
        self.copy = copy
    }

    /// What a node's copy of the shared feed holds and did: pages are read
    /// from it while it has caught up with every write the node has heard of.
    public struct Copy: Sendable, Equatable, Codable {
        /// Where its files are.
        public var folder: String
        /// The feed's write count it has caught up with (-1: not yet).
        public var writes: Int
        /// Pages read from the copy, and pages asked of the store because the copy could not answer them.
        public var pagesFromCopy: Int
        public var pagesFromStore: Int
        /// Catch-ups that copied something, rows copied, and rebuilds from nothing.
        public var catchUps: Int
        public var rowsCopied: Int
        public var rebuilds: Int
        /// Why the last catch-up failed, until one succeeds.
        public var problem: String?

        public init(
            folder: String, writes: Int, pagesFromCopy: Int, pagesFromStore: Int, catchUps: Int, rowsCopied: Int, rebuilds: Int,
            problem: String?
        ) {
            (self.folder, self.writes, self.pagesFromCopy, self.pagesFromStore) = (folder, writes, pagesFromCopy, pagesFromStore)
            (self.catchUps, self.rowsCopied, self.rebuilds, self.problem) = (catchUps, rowsCopied, rebuilds, problem)
        }
    }
}

/// The store cannot answer now (down, or too slow); a page not in the cache
/// gets 503 with Retry-After, and serving resumes when it answers again.
public struct StoreUnavailable: Error, CustomStringConvertible {
    /// Why, in an operator's words.
    public var description: String

    /// Makes the error.
    public init(_ description: String) { self.description = description }
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
    /// Inserts `item`, or updates the item with its source and guid when something changed.
    /// With `keepStoredDate`, an item already stored keeps its date.
    func upsert(_ item: FeedItem, keepStoredDate: Bool) throws
    /// Inserts `item` as another store holds it: its id, rank and preview
    /// too (`warmfeed copy-store`, into an empty store).
    func insertCopy(_ item: FeedItem) throws
    /// Gives the store `epoch`, so cursors made on the store copied from stay valid.
    func adoptEpoch(_ epoch: UInt32) throws
    /// The id of the source keyed `key`, made when the store has none.
    func source(key: String) throws -> Int64
    /// Keeps `state` for the source `id` (what its poller keeps, opaque to the store).
    func keepSource(_ id: Int64, state: String) throws
    /// Removes the source `id` and every item it gave; ranks are made dense again.
    func removeSource(_ id: Int64) throws
    /// Inserts `entry` with its id, as the store copied from holds it.
    func insertSourceCopy(_ entry: SourceEntry) throws
    /// Gives every item of the source `id` the title and site a row shows,
    /// and makes their rows again; moves the items of no source to it first
    /// when `adoptingUnsourced`.
    func relabelSource(_ id: Int64, title: String?, link: String?, adoptingUnsourced: Bool) throws
    /// What the write did so far.
    var summary: UpsertSummary { get }
    /// Writes what the sink holds back for a batch, so that `summary`
    /// counts every item given so far.
    func settle() throws
}

extension FeedItemSink {
    /// A sink that writes each item as it comes holds nothing back.
    public func settle() throws {}
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

    /// Inserts `item`, or updates the item with its source and guid when something
    /// changed. With `keepStoredDate`, an item already stored keeps its date (the source
    /// gave none, and a guessed date must not move it on every import).
    public mutating func upsert(_ item: FeedItem, keepStoredDate: Bool = false) throws {
        try sink.upsert(item, keepStoredDate: keepStoredDate)
    }

    /// Inserts `item` with its id, rank and preview, as the store it is
    /// copied from holds it (into an empty store: ranks are not renumbered).
    public mutating func insertCopy(_ item: FeedItem) throws {
        try sink.insertCopy(item)
    }

    /// Gives the store the epoch of the store it is copied from, so cursors
    /// readers hold stay valid.
    public mutating func adoptEpoch(_ epoch: UInt32) throws {
        try sink.adoptEpoch(epoch)
    }

    /// The id of the source keyed `key` (its listed URL or path), made when
    /// the store has none; items written with it belong to it.
    public mutating func source(key: String) throws -> Int64 {
        try sink.source(key: key)
    }

    /// Keeps `state` for the source `id`, in this transaction: what a poller
    /// keeps of a source (its validators, its schedule) lands with its items.
    public mutating func keepSource(_ id: Int64, state: String) throws {
        try sink.keepSource(id, state: state)
    }

    /// Removes the source `id` and every item it gave (`summary.removed`
    /// counts them); the ranks of the items left are made dense again.
    public mutating func removeSource(_ id: Int64) throws {
        try sink.removeSource(id)
    }

    /// Gives every item of the source `id` the title and site its rows show
    /// (the feed named itself anew), counted in `summary.relabelled`. With
    /// `adoptingUnsourced`, the items of no source become the source's first:
    /// a data folder from before sources keeps its items, ids and ranks when
    /// its one source is listed again.
    public mutating func relabelSource(_ id: Int64, title: String?, link: String?, adoptingUnsourced: Bool = false) throws {
        try sink.relabelSource(id, title: title, link: link, adoptingUnsourced: adoptingUnsourced)
    }

    /// Inserts `entry` with its id, as the store it is copied from holds it
    /// (into an empty store, before the items that carry its id).
    public mutating func insertSourceCopy(_ entry: SourceEntry) throws {
        try sink.insertSourceCopy(entry)
    }

    /// What the write did so far (a backend that writes in batches may not
    /// have counted the last items yet: `settle` first).
    public var summary: UpsertSummary { sink.summary }

    /// Writes what the backend holds back for a batch: `summary` then counts
    /// every item given so far.
    public mutating func settle() throws {
        try sink.settle()
    }
}

/// A source as the store keeps it: the key it is listed by, the id its items
/// carry, and what its poller keeps of it (the store does not read it).
public struct SourceEntry: Sendable, Equatable {
    /// The id items of this source carry (`FeedItem.source`); never 0.
    public var id: Int64
    /// The listed URL or path, as the source list names it (normalised by the lister).
    public var key: String
    /// What the poller kept (JSON), or nil before its first poll.
    public var state: String?

    /// Makes an entry.
    public init(id: Int64, key: String, state: String?) {
        (self.id, self.key, self.state) = (id, key, state)
    }
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
    /// Items removed with their source.
    public var removed = 0
    /// Items given their source's new title or site.
    public var relabelled = 0
    /// Whether the items changed: anything derived from them is made again.
    public var changedItems: Bool { inserted + updated + removed + relabelled > 0 }

    /// An empty summary.
    public init() {}

    /// What a write did between two summaries of it, `earlier` and this one.
    public func since(_ earlier: UpsertSummary) -> UpsertSummary {
        var done = UpsertSummary()
        done.inserted = inserted - earlier.inserted
        done.updated = updated - earlier.updated
        done.unchanged = unchanged - earlier.unchanged
        done.repeated = repeated - earlier.repeated
        done.removed = removed - earlier.removed
        done.relabelled = relabelled - earlier.relabelled
        return done
    }
}
