import Foundation
import GRDB
import PageFiles
import ServiceLifecycle
import Synchronization
import WarmfeedCore

/// The feed's items in one SQLite file (GRDB), read by keyset: the embedded
/// default behind the `FeedStore` protocol.
///
/// Items are ordered newest first by (published, id). Each item also carries
/// `seq`, its rank from the oldest, kept dense by every write; it turns a deep
/// link to page N into an index seek (`seq <= total - (N-1)·size`) instead of an
/// OFFSET scan, so page 30,000 costs what page 1 costs.
public final class SQLiteFeedStore: ImmediatePages {
    private let pool: DatabasePool
    private let path: String
    /// Pages are read past GRDB, on connections of their own (see `SQLitePageReader`).
    let pages: SQLitePageReader
    /// The rows rendered ahead (`path` + "-rows").
    let rows: RowLog
    /// Where each rank's row is (`path` + "-pages"): deep pages without SQLite.
    let index: PageIndex
    var poolForWriting: DatabasePool { pool }
    /// The feed's epoch: a random number fixed when the store is created.
    /// Cursors carry it, so a cursor from another store is told apart.
    public let epoch: UInt32
    /// Read on every page request by every server thread: an atomic load, not a lock.
    private let revisionCounter = Atomic<Int>(0)
    /// The `writes` count in `meta` when this process last looked.
    private let writesSeen = Mutex<Int64?>(nil)

    /// Opens (and creates, when missing) the store at `path`.
    public init(path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        // 1 MiB of page cache a reading connection, not SQLite's 2 MB: item
        // reads touch few pages, and the system's page cache holds the file.
        // The one writing connection gets 8 MiB: a write makes ranks dense
        // from its oldest item up, and with sources polled a minute apart
        // that is the newest thousand rows, read and written again each time.
        configuration.prepareDatabase { db in
            try db.execute(sql: db.configuration.readonly ? "PRAGMA cache_size = -1024" : "PRAGMA cache_size = -8192")
        }
        self.path = path
        pool = try DatabasePool(path: path, configuration: configuration)
        // A store a newer warmfeed migrated is refused rather than misread.
        if try pool.read({ db in try Self.migrator.hasBeenSuperseded(db) }) {
            throw StoreSchemaError.newerThanThisBinary(store: path, known: Self.migrator.migrations.last ?? "none")
        }
        try Self.migrator.migrate(pool)
        pages = SQLitePageReader(path: path)
        rows = try RowLog(path: path + "-rows")
        index = try PageIndex(path: path + "-pages", rows: rows)
        // Places past the file's end (it was removed, or a crash lost its
        // tail) are forgotten, so those rows are prepared again; the page
        // index is rebuilt when that changed places, or when it does not
        // agree with the store (new, removed, cut, or left by a crash).
        try Self.writeIndexed(pool, index) { [rows, index] db in
            try db.execute(sql: "UPDATE item SET ahead_at = NULL, ahead_size = NULL WHERE ahead_at + ahead_size > ?", arguments: [rows.size])
            if try db.changesCount > 0 || !index.agrees(with: db) { try index.rebuild(db) }
        }
        epoch = try pool.write { db in
            if let stored = try UInt32.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'epoch'") {
                return stored
            }
            let fresh = UInt32.random(in: 1...UInt32.max)
            try db.execute(sql: "INSERT INTO meta(key, value) VALUES ('epoch', ?)", arguments: [fresh])
            return fresh
        }
    }

    /// Counts the store's writes since it was opened; anything derived from the
    /// items (rendered pages) is keyed by it.
    public var revision: Int { revisionCounter.load(ordering: .acquiring) }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value) WITHOUT ROWID;
                    CREATE TABLE item (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        guid TEXT NOT NULL UNIQUE,
                        title TEXT NOT NULL,
                        summary TEXT NOT NULL,
                        link TEXT,
                        imageURL TEXT,
                        imageWidth INTEGER,
                        imageHeight INTEGER,
                        published INTEGER NOT NULL,
                        seq INTEGER
                    );
                    CREATE INDEX item_order ON item(published, id);
                    CREATE INDEX item_seq ON item(seq);
                    """)
        }
        migrator.registerMigration("v2: previews") { db in
            // Two colours of each picture, kept once a thumbnail has been made (issue 11).
            try db.execute(sql: "ALTER TABLE item ADD COLUMN preview INTEGER")
        }
        migrator.registerMigration("v3: prepared rows") { db in
            // Each item's row rendered ahead (see `PreparedPage`), NULL until it is;
            // the partial index finds the rows to prepare without a walk.
            try db.execute(
                sql: """
                    ALTER TABLE item ADD COLUMN prepared BLOB;
                    CREATE INDEX item_unprepared ON item(id) WHERE prepared IS NULL;
                    """)
        }
        migrator.registerMigration("v4: prepared rows in their own file") { db in
            // The rows leave the item table for `RowLog`; an item keeps its
            // row's place. A page reads its rows' places and previews from one
            // covering index (it replaces `item_seq`, its first column), and no
            // table row. Rows prepared in the column are prepared again.
            try db.execute(
                sql: """
                    DROP INDEX item_unprepared;
                    ALTER TABLE item DROP COLUMN prepared;
                    ALTER TABLE item ADD COLUMN ahead_at INTEGER;
                    ALTER TABLE item ADD COLUMN ahead_size INTEGER;
                    CREATE INDEX item_unprepared ON item(id) WHERE ahead_at IS NULL;
                    CREATE INDEX item_page ON item(seq, published, preview, ahead_at, ahead_size);
                    DROP INDEX item_seq;
                    """)
        }
        migrator.registerMigration("v5: sources") { db in
            // Items belong to a source (0: none, every item from before), and
            // a guid is unique within its source: the same entry id in two
            // feeds is two items. v1's `guid UNIQUE` cannot be dropped, so the
            // table is made again, with every id, rank, preview and row place
            // kept: the row file and the page index stay valid. Ids name
            // pictures, so AUTOINCREMENT's high mark moves with them.
            try db.execute(
                sql: """
                    CREATE TABLE source (id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE, state TEXT);
                    CREATE TABLE item_v5 (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        source INTEGER NOT NULL DEFAULT 0,
                        guid TEXT NOT NULL,
                        title TEXT NOT NULL,
                        summary TEXT NOT NULL,
                        link TEXT,
                        imageURL TEXT,
                        imageWidth INTEGER,
                        imageHeight INTEGER,
                        published INTEGER NOT NULL,
                        seq INTEGER,
                        preview INTEGER,
                        ahead_at INTEGER,
                        ahead_size INTEGER,
                        sourceTitle TEXT,
                        sourceLink TEXT,
                        UNIQUE (source, guid)
                    );
                    INSERT INTO item_v5 (id, guid, title, summary, link, imageURL, imageWidth, imageHeight, published, seq, preview, ahead_at, ahead_size)
                        SELECT id, guid, title, summary, link, imageURL, imageWidth, imageHeight, published, seq, preview, ahead_at, ahead_size FROM item;
                    INSERT INTO sqlite_sequence (name, seq) SELECT 'item_v5', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'item_v5');
                    UPDATE sqlite_sequence SET seq = MAX(seq, IFNULL((SELECT seq FROM sqlite_sequence WHERE name = 'item'), 0)) WHERE name = 'item_v5';
                    DROP TABLE item;
                    ALTER TABLE item_v5 RENAME TO item;
                    CREATE INDEX item_order ON item(published, id);
                    CREATE INDEX item_unprepared ON item(id) WHERE ahead_at IS NULL;
                    CREATE INDEX item_page ON item(seq, published, preview, ahead_at, ahead_size);
                    """)
        }
        return migrator
    }

    /// How many items the feed holds.
    public func count() async throws -> Int {
        try await pool.read { db in try Self.total(db) }
    }

    /// The page for `request`, `size` items long; nil when no such page exists
    /// (a page number past the end, a cursor with nothing after it).
    public func page(_ request: PageRequest, size: Int) async throws -> Page? {
        try pageAtOnce(request, size: size)
    }

    /// The page for `request`, read on this thread (a read never waits for a
    /// writer: the store runs in WAL mode).
    public func pageAtOnce(_ request: PageRequest, size: Int) throws -> Page? {
        precondition(size > 0)
        return try pages.read { connection -> Page? in
            var total = 0
            try connection.query(SQL.total, []) { total = Int($0.columnInteger(0) ?? 0) }
            var items: [FeedItem] = []
            items.reserveCapacity(size)
            func read(_ sql: String, _ arguments: [Int64]) throws {
                try connection.query(sql, arguments) { items.append(Self.item($0)) }
            }
            switch request {
            case .number(let number):
                let top = Int64(total) - Int64(number - 1) * Int64(size)
                if total == 0, number == 1 {
                    return Page(items: [], total: 0, firstPosition: 0, older: nil, newer: nil)
                }
                guard number >= 1, top >= 1 else { return nil }
                try read(SQL.pageByNumber, [top, Int64(size)])
            case .after(let cursor):
                try read(SQL.pageAfter, [cursor.published, cursor.id, Int64(size)])
            case .before(let cursor):
                try read(SQL.pageBefore, [cursor.published, cursor.id, Int64(size)])
                items.reverse()
            }
            return Page(ranked: items, total: total, cursor: cursor(of:))
        }
    }

    func bumpRevision() {
        revisionCounter.add(1, ordering: .releasing)
    }

    /// This process's own write made the store's count `writes`: it bumped
    /// `revision` itself, so `noticeOtherWriters` must not take the count for
    /// another process's write and bump it again (every page rendered in the
    /// second after a write was thrown away, and pre-warm warmed its pages
    /// again). A count already seen past it (another process wrote after) stays.
    func sawOwnWrite(_ writes: Int64) {
        writesSeen.withLock { seen in
            if seen.map({ $0 < writes }) ?? true { seen = writes }
        }
    }

    /// Notices writes made by another process (`warmfeed import` on the data
    /// folder of a running server): every write counts itself in `meta`, and a
    /// count this process has not seen bumps `revision`, so pages rendered
    /// before it are not served again. Cheap (one primary-key read); the server
    /// calls it every second.
    ///
    /// Read through the page reader, never through GRDB's pool: the server
    /// calls this from a task, and a synchronous GRDB read there blocks a
    /// thread of Swift's cooperative pool until a reader is free, while the
    /// pool's readers are held by async reads (`item(id:)`) that need a
    /// cooperative thread to finish. With both of a 2-core machine's
    /// cooperative threads blocked so, the whole process froze (a test run
    /// hung; gdb showed both threads here).
    public func noticeOtherWriters() {
        guard
            let writes = try? pages.read({ connection -> Int64 in
                var writes: Int64 = 0
                try connection.query(SQL.writes, []) { writes = $0.columnInteger(0) ?? 0 }
                return writes
            })
        else { return }
        let changed = writesSeen.withLock { seen -> Bool in
            defer { seen = writes }
            return seen != nil && seen != writes
        }
        if changed { bumpRevision() }
    }

    private static func total(_ db: Database) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: SQL.total)) ?? 0
    }

    /// An item from the current row of a statement over `SQL.columns`.
    static func item(_ row: OpaquePointer) -> FeedItem {
        FeedItem(
            id: row.columnInteger(0), guid: row.columnText(1) ?? "", title: row.columnText(2) ?? "",
            summary: row.columnText(3) ?? "", link: row.columnText(4), imageURL: row.columnText(5),
            imageWidth: row.columnInteger(6).map(Int.init), imageHeight: row.columnInteger(7).map(Int.init),
            published: row.columnInteger(8) ?? 0, seq: row.columnInteger(9), preview: row.columnInteger(10),
            source: row.columnInteger(11) ?? 0, sourceTitle: row.columnText(12), sourceLink: row.columnText(13)
        )
    }

    /// The read queries, named so tests can check their query plans.
    enum SQL {
        /// The columns a page reads, in the order `item(_:)` takes them.
        static let columns =
            "id, guid, title, summary, link, imageURL, imageWidth, imageHeight, published, seq, preview, source, sourceTitle, sourceLink"
        /// A deep link: the page whose first item has rank ≤ ?.
        static let pageByNumber = "SELECT \(columns) FROM item WHERE seq <= ? ORDER BY seq DESC LIMIT ?"
        /// Following a sentinel: the items just older than (published, id).
        static let pageAfter = "SELECT \(columns) FROM item WHERE (published, id) < (?, ?) ORDER BY published DESC, id DESC LIMIT ?"
        /// A "newer items" link: the items just newer than (published, id), oldest first.
        static let pageBefore = "SELECT \(columns) FROM item WHERE (published, id) > (?, ?) ORDER BY published ASC, id ASC LIMIT ?"
        /// A prepared page's rows: their places (`item_page` covers it), from seq ? down.
        static let placesDown = "SELECT id, published, seq, preview, ahead_at, ahead_size FROM item WHERE seq <= ? ORDER BY seq DESC LIMIT ?"
        /// A "newer items" page's rows, oldest first, from seq ? up.
        static let placesUp = "SELECT id, published, seq, preview, ahead_at, ahead_size FROM item WHERE seq >= ? ORDER BY seq ASC LIMIT ?"
        /// The rank of the item just older than (published, id), where a cursor's page starts.
        static let seqOlder = "SELECT seq FROM item WHERE (published, id) < (?, ?) ORDER BY published DESC, id DESC LIMIT 1"
        /// The rank of the item just newer than (published, id).
        static let seqNewer = "SELECT seq FROM item WHERE (published, id) > (?, ?) ORDER BY published ASC, id ASC LIMIT 1"
        static let itemByID = "SELECT \(columns) FROM item WHERE id = ?"
        /// seq is dense from 1, so the highest seq is the count, found by an index seek.
        static let total = "SELECT MAX(seq) FROM item"
        /// How many writes the store has had (every process's).
        static let writes = "SELECT value FROM meta WHERE key = 'writes'"
        /// How many writes changed the page index (its header carries the count it agrees with).
        static let pagesStamp = "SELECT value FROM meta WHERE key = 'pages'"
    }
}

extension SQLiteFeedStore {
    /// The item with `id`, or nil.
    public func item(id: Int64) async throws -> FeedItem? {
        try await poolForWriting.read { db in try FeedItem.fetchOne(db, key: id) }
    }
}

extension SQLiteFeedStore {
    /// Keeps each item's picture preview (id → preview), in one transaction.
    /// Not a change of the feed: the revision stays, cached pages stay.
    public func setPreviews(_ previews: [Int64: Int64]) async throws {
        guard !previews.isEmpty else { return }
        try await writeIndexed { [index] db in
            let update = try db.cachedStatement(sql: "UPDATE item SET preview = ? WHERE id = ? AND preview IS NOT ? RETURNING seq")
            var ranks: [Int64] = []
            for (id, preview) in previews { ranks += try Int64.fetchAll(update, arguments: [preview, id, preview]) }
            if !ranks.isEmpty { try index.refresh(db, ranks: ranks, from: nil) }
        }
    }
}

extension SQLiteFeedStore {
    /// A value kept in the store's `meta` table (the source's validators, say), or nil.
    public func note(_ key: String) async throws -> String? {
        try await poolForWriting.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: ["note:" + key])
        }
    }

    public func sources() async throws -> [SourceEntry] {
        try await poolForWriting.read { db in
            try Row.fetchAll(db, sql: "SELECT id, key, state FROM source ORDER BY id").map { row in
                SourceEntry(id: row[0], key: row[1], state: row[2])
            }
        }
    }

    /// Keeps `value` under `key` in the `meta` table (nil removes it).
    public func setNote(_ key: String, _ value: String?) async throws {
        try await poolForWriting.write { db in
            if let value {
                try db.execute(
                    sql: "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    arguments: ["note:" + key, value])
            } else {
                try db.execute(sql: "DELETE FROM meta WHERE key = ?", arguments: ["note:" + key])
            }
        }
    }
}

extension SQLiteFeedStore {
    /// Notices writes by other processes on the same file (`warmfeed import`
    /// beside a running server) once a second, until graceful shutdown.
    public func run() async {
        noticeOtherWriters()
        try? await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: .seconds(1))
                self.noticeOtherWriters()
                await self.mendIndex()
            }
        }
    }

    /// Rebuilds the page index when it does not agree with the store (a
    /// write that did not commit, another opening that died mid-write), so
    /// readers stop asking SQLite. A disagreement seen from outside a write
    /// may be another opening's write in flight: it is checked again inside
    /// one, where no other write can be.
    func mendIndex() async {
        let counts = try? pages.read { connection -> (pages: Int64, writes: Int64) in
            var counts: (pages: Int64, writes: Int64) = (0, 0)
            try connection.query(SQL.pagesStamp, []) { counts.pages = $0.columnInteger(0) ?? 0 }
            try connection.query(SQL.writes, []) { counts.writes = $0.columnInteger(0) ?? 0 }
            return counts
        }
        if let counts, index.agrees(stamp: counts.pages, writes: counts.writes) { return }
        _ = try? await writeIndexed { [index] db in
            if !(try index.agrees(with: db)) { try index.rebuild(db) }
        }
    }

    /// One file has one server: it polls every source.
    public func pollingShare() async -> PollingShare? { .whole }

    /// The median of 64 pages spread across the feed, read from the page index alone.
    public func rowReadsPerPage(size: Int) async -> Double? {
        index.readsPerPage(size: size, samples: 64)
    }

    /// A file on this machine: it answers while the process runs.
    public var status: StoreStatus { StoreStatus(backend: "sqlite", location: path) }

    /// Nothing to let go of before the process ends (GRDB closes on release).
    public func close() async {}
}
