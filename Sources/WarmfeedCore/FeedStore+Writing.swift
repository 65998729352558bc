import GRDB

/// What one write did.
public struct UpsertSummary: Sendable, Equatable {
    /// Items that were new.
    public var inserted = 0
    /// Items already present (same guid) whose content changed.
    public var updated = 0
    /// Items already present and unchanged.
    public var unchanged = 0

    /// An empty summary.
    public init() {}
}

extension FeedStore {
    /// Inserts new items and updates changed ones, keyed by guid, in one
    /// transaction: either all of them land or none does.
    @discardableResult
    public func upsert(_ items: [FeedItem]) throws -> UpsertSummary {
        let summary = try poolForWriting.write { db -> UpsertSummary in
            var summary = UpsertSummary()
            // The oldest (published, id) the write touched: ranks from there up are renumbered.
            var lowest: (published: Int64, id: Int64)?
            func touch(_ published: Int64, _ id: Int64) {
                if let current = lowest, (current.published, current.id) <= (published, id) { return }
                lowest = (published, id)
            }
            let find = try db.cachedStatement(sql: "SELECT * FROM item WHERE guid = ?")
            for var item in items {
                if let existing = try FeedItem.fetchOne(find, arguments: [item.guid]) {
                    item.id = existing.id
                    item.seq = existing.seq
                    if item == existing {
                        summary.unchanged += 1
                        continue
                    }
                    try item.update(db)
                    summary.updated += 1
                    if item.published != existing.published {
                        touch(min(item.published, existing.published), existing.id ?? 0)
                    }
                } else {
                    item.id = nil
                    item.seq = nil
                    try item.insert(db)
                    summary.inserted += 1
                    touch(item.published, item.id ?? 0)
                }
            }
            if let lowest {
                try Self.renumber(db, from: lowest)
            }
            return summary
        }
        if summary.inserted + summary.updated > 0 { bumpRevision() }
        return summary
    }

    /// Makes `seq` dense again for every item at or above `from` in feed order.
    private static func renumber(_ db: Database, from start: (published: Int64, id: Int64)) throws {
        let base = try Int64.fetchOne(db, sql: """
            SELECT seq FROM item WHERE (published, id) < (?, ?) ORDER BY published DESC, id DESC LIMIT 1
            """, arguments: [start.published, start.id]) ?? 0
        try db.execute(sql: """
            UPDATE item SET seq = ranked.rank FROM (
                SELECT id, ? + ROW_NUMBER() OVER (ORDER BY published, id) AS rank
                FROM item WHERE (published, id) >= (?, ?)
            ) AS ranked
            WHERE item.id = ranked.id AND item.seq IS NOT ranked.rank
            """, arguments: [base, start.published, start.id])
    }
}
