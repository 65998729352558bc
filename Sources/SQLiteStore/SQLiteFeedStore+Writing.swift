import Foundation
import GRDB
import PageFiles
import WarmfeedCore

/// The SQLite side of a `FeedWriter`: items written one at a time inside one
/// GRDB write transaction. Only `SQLiteFeedStore.write(_:)` makes one, and it
/// lives no longer than that transaction.
final class SQLiteItemSink: FeedItemSink {
    private let db: Database
    /// The highest id before this write began: a row above it was inserted by this write.
    private let idsBefore: Int64
    /// The oldest (published, id) the write touched: ranks from there up are renumbered.
    private var lowest: (published: Int64, id: Int64)?
    /// What the write did so far.
    private(set) var summary = UpsertSummary()
    /// Ranks whose page-index records changed without the rank moving (an item updated in place).
    private(set) var changedRanks: [Int64] = []
    /// The lowest rank from which every page-index record may have changed; nil when none.
    private(set) var changedFrom: Int64?
    /// The store's count of writes once this one is counted (nil: it wrote nothing).
    private(set) var writesCounted: Int64?

    init(db: Database) throws {
        self.db = db
        idsBefore = try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM item") ?? 0
    }

    /// Inserts `item`, or updates the item with its guid when something changed.
    /// With `keepStoredDate`, an item already stored keeps its date (the source
    /// gave none, and a guessed date must not move it on every import).
    func upsert(_ item: FeedItem, keepStoredDate: Bool) throws {
        let find = try db.cachedStatement(sql: "SELECT * FROM item WHERE source = ? AND guid = ?")
        if let existing = try FeedItem.fetchOne(find, arguments: [item.source, item.guid]) {
            let item = item.replacing(existing, keepStoredDate: keepStoredDate)
            if (existing.id ?? 0) > idsBefore { summary.repeated += 1 }
            if item == existing {
                if (existing.id ?? 0) <= idsBefore { summary.unchanged += 1 }
                return
            }
            try item.update(db)
            // Its row, rendered from what it was, is rendered again from what it is.
            try db.cachedStatement(sql: "UPDATE item SET ahead_at = NULL, ahead_size = NULL WHERE id = ?").execute(arguments: [existing.id])
            if (existing.id ?? 0) <= idsBefore { summary.updated += 1 }
            if item.published != existing.published {
                touch(min(item.published, existing.published), existing.id ?? 0)
            } else if let seq = existing.seq {
                changedRanks.append(seq)
            }
        } else {
            // A cached statement: GRDB's record insert builds its SQL per call, a fifth of an import's time.
            let insert = try db.cachedStatement(
                sql: """
                    INSERT INTO item (guid, title, summary, link, imageURL, imageWidth, imageHeight, published, source, sourceTitle, sourceLink)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            try insert.execute(arguments: [
                item.guid, item.title, item.summary, item.link, item.imageURL, item.imageWidth, item.imageHeight, item.published,
                item.source, item.sourceTitle, item.sourceLink,
            ])
            summary.inserted += 1
            touch(item.published, db.lastInsertedRowID)
        }
    }

    func insertCopy(_ item: FeedItem) throws {
        let insert = try db.cachedStatement(
            sql: """
                INSERT INTO item (id, guid, title, summary, link, imageURL, imageWidth, imageHeight, published, seq, preview,
                    source, sourceTitle, sourceLink)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        try insert.execute(arguments: [
            item.id, item.guid, item.title, item.summary, item.link, item.imageURL, item.imageWidth, item.imageHeight,
            item.published, item.seq, item.preview, item.source, item.sourceTitle, item.sourceLink,
        ])
        summary.inserted += 1
        if let seq = item.seq { changedFrom = min(changedFrom ?? seq, seq) }
    }

    func adoptEpoch(_ epoch: UInt32) throws {
        try db.execute(sql: "UPDATE meta SET value = ? WHERE key = 'epoch'", arguments: [epoch])
    }

    func source(key: String) throws -> Int64 {
        if let id = try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM source WHERE key = ?"), arguments: [key]) {
            return id
        }
        try db.cachedStatement(sql: "INSERT INTO source (key) VALUES (?)").execute(arguments: [key])
        return db.lastInsertedRowID
    }

    func keepSource(_ id: Int64, state: String) throws {
        try db.cachedStatement(sql: "UPDATE source SET state = ? WHERE id = ?").execute(arguments: [state, id])
    }

    func removeSource(_ id: Int64) throws {
        // Ranks above the oldest item removed are made dense again by `finish`.
        let gone = try Row.fetchAll(db, sql: "DELETE FROM item WHERE source = ? RETURNING published, id", arguments: [id])
        for row in gone { touch(row[0], row[1]) }
        summary.removed += gone.count
        try db.execute(sql: "DELETE FROM source WHERE id = ?", arguments: [id])
    }

    func relabelSource(_ id: Int64, title: String?, link: String?, adoptingUnsourced: Bool) throws {
        if adoptingUnsourced { try db.execute(sql: "UPDATE item SET source = ? WHERE source = 0", arguments: [id]) }
        let ranks = try Int64?.fetchAll(
            db,
            sql: """
                UPDATE item SET sourceTitle = ?, sourceLink = ?, ahead_at = NULL, ahead_size = NULL
                WHERE source = ? AND (sourceTitle IS NOT ? OR sourceLink IS NOT ?) RETURNING seq
                """, arguments: [title, link, id, title, link])
        summary.relabelled += ranks.count
        changedRanks += ranks.compactMap { $0 }
    }

    func insertSourceCopy(_ entry: SourceEntry) throws {
        try db.execute(sql: "INSERT INTO source (id, key, state) VALUES (?, ?, ?)", arguments: [entry.id, entry.key, entry.state])
    }

    private func touch(_ published: Int64, _ id: Int64) {
        if let current = lowest, (current.published, current.id) <= (published, id) { return }
        lowest = (published, id)
    }

    /// Makes `seq` dense again for every item at or above the oldest one touched.
    fileprivate func finish() throws -> UpsertSummary {
        if summary.changedItems {
            // Other processes reading this store notice the write by this count.
            // The count it makes, in the same statement: this process takes it for its own write.
            writesCounted = try Int64.fetchOne(
                db,
                sql: """
                    INSERT INTO meta(key, value) VALUES ('writes', 1)
                    ON CONFLICT(key) DO UPDATE SET value = value + 1
                    RETURNING value
                    """)
        }
        if let start = lowest {
            let base =
                try Int64.fetchOne(
                    db,
                    sql: """
                        SELECT seq FROM item WHERE (published, id) < (?, ?) ORDER BY published DESC, id DESC LIMIT 1
                        """, arguments: [start.published, start.id]) ?? 0
            try db.execute(
                sql: """
                    UPDATE item SET seq = ranked.rank FROM (
                        SELECT id, ? + ROW_NUMBER() OVER (ORDER BY published, id) AS rank
                        FROM item WHERE (published, id) >= (?, ?)
                    ) AS ranked
                    WHERE item.id = ranked.id AND item.seq IS NOT ranked.rank
                    """, arguments: [base, start.published, start.id])
            changedFrom = min(changedFrom ?? base + 1, base + 1)
        }
        return summary
    }
}

extension SQLiteFeedStore {
    /// Runs `body` in one write transaction: every item it writes lands, or
    /// (when it throws) none does and the store is as it was. Readers keep
    /// reading the previous state meanwhile (WAL).
    public func write<Result>(_ body: (inout FeedWriter) throws -> Result) throws -> (Result, UpsertSummary) {
        let (result, summary, counted) = try Self.writeIndexed(poolForWriting, index) { [index] db -> (Result, UpsertSummary, Int64?) in
            let sink = try SQLiteItemSink(db: db)
            var writer = FeedWriter(sink: sink)
            let result = try body(&writer)
            _ = consume writer
            let summary = try sink.finish()
            if summary.changedItems { try index.refresh(db, ranks: sink.changedRanks, from: sink.changedFrom) }
            return (result, summary, sink.writesCounted)
        }
        if summary.changedItems { bumpRevision() }
        if let counted { sawOwnWrite(counted) }
        return (result, summary)
    }
}

extension SQLiteFeedStore {
    public func prepareRows(
        tag: UInt32, sweep: Bool, after id: Int64, limit: Int, render: @escaping @Sendable (FeedItem) -> [UInt8]?
    ) async throws -> (kept: Int, last: Int64)? {
        // In one write transaction: no write changes the items between the read
        // and the keep, and no other opening appends to the row file meanwhile.
        try await writeIndexed { [rows, index] db -> (kept: Int, last: Int64)? in
            var whole = false
            if sweep, id == 0 {
                // A sweep renders every row again: it starts the file afresh, every
                // row unprepared, and lays them out newest first, as pages list them.
                try rows.truncate()
                try db.execute(sql: "UPDATE item SET ahead_at = NULL, ahead_size = NULL WHERE ahead_at IS NOT NULL")
                whole = true
            }
            // A sweep's cursor is the lowest rank laid so far (below it, in rank order); a pass's, the highest id.
            // A row a write moved past the sweep's cursor stays unprepared: the next pass prepares it.
            var items =
                sweep
                ? try FeedItem.fetchAll(
                    db.cachedStatement(sql: "SELECT * FROM item WHERE ahead_at IS NULL AND seq < ? ORDER BY seq DESC LIMIT ?"),
                    arguments: [id == 0 ? Int64.max : id, limit])
                : try FeedItem.fetchAll(
                    db.cachedStatement(sql: "SELECT * FROM item WHERE ahead_at IS NULL AND id > ? ORDER BY id LIMIT ?"),
                    arguments: [id, limit])
            guard let last = sweep ? items.last?.seq : items.last?.id else {
                if whole { try index.refresh(db, ranks: [], from: nil, whole: true) }
                return nil
            }
            // New rows lie in date order too (oldest first, as one feed's ids run; a page reads
            // them backwards): a river's polls write its sources' items one source after
            // another, with dates that interleave.
            if !sweep { items.sort { ($0.published, $0.id ?? 0) < ($1.published, $1.id ?? 0) } }
            let records = items.compactMap { item in
                render(item).map { RowLog.Record(id: item.id ?? 0, hasPicture: item.imageURL != nil, prepared: $0) }
            }
            let places = try rows.append(records)
            let update = try db.cachedStatement(sql: "UPDATE item SET ahead_at = ?, ahead_size = ? WHERE id = ?")
            for (record, place) in zip(records, places) {
                try update.execute(arguments: [place.at, place.size, record.id])
            }
            try index.refresh(db, ranks: items.compactMap(\.seq), from: nil, whole: whole)
            return (records.count, last)
        }
    }
}

extension SQLiteFeedStore {
    public func forgetPreparedRows(_ ids: [Int64]) async throws {
        guard !ids.isEmpty else { return }
        try await writeIndexed { [index] db in
            let forget = try db.cachedStatement(sql: "UPDATE item SET ahead_at = NULL, ahead_size = NULL WHERE id = ? RETURNING seq")
            var ranks: [Int64] = []
            for id in ids { ranks += try Int64.fetchAll(forget, arguments: [id]) }
            try index.refresh(db, ranks: ranks, from: nil)
        }
    }
}

extension SQLiteFeedStore {
    /// A write transaction that may change the page index: when it does not
    /// commit after the index was changed, the index is distrusted (readers
    /// ask SQLite) until a write rebuilds it.
    static func writeIndexed<Result>(_ pool: DatabasePool, _ index: PageIndex, _ body: (Database) throws -> Result) throws -> Result {
        let before = index.header()
        do {
            return try pool.write(body)
        } catch {
            if index.header() != before { index.distrust() }
            throw error
        }
    }

    /// `writeIndexed`, off the caller's thread.
    func writeIndexed<Result: Sendable>(_ body: @escaping @Sendable (Database) throws -> Result) async throws -> Result {
        let before = index.header()
        do {
            return try await poolForWriting.write(body)
        } catch {
            if index.header() != before { index.distrust() }
            throw error
        }
    }
}
