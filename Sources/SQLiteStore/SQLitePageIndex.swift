import GRDB
import GRDBSQLite
import PageFiles

/// The page index of a SQLite store (`feed.sqlite-pages`, see `PageIndex`),
/// kept from the item table inside each write transaction, which orders every
/// writer (this process's and another opening's).
///
/// Crashes: a writer that died between `begin` and `finish` leaves the
/// generation odd; one whose transaction did not commit leaves a `stamp` the
/// database does not have (each write counts itself in `meta` under `pages`
/// and writes that count into the header). Either way the next opening, or
/// the next write, rebuilds the file from the item table; meanwhile readers
/// ask SQLite.
extension PageIndex {
    /// Whether the file agrees with the store as `db` sees it.
    func agrees(with db: Database) throws -> Bool {
        try agrees(stamp: Self.count("pages", db), writes: Self.count("writes", db))
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
        let stamp =
            try Int64.fetchOne(
                db,
                sql: """
                    INSERT INTO meta(key, value) VALUES ('pages', 1)
                    ON CONFLICT(key) DO UPDATE SET value = value + 1 RETURNING value
                    """) ?? 0
        var header = try begin()
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
        header.count = count
        header.stamp = stamp
        header.writes = try Self.count("writes", db)
        try finish(header)
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
        var records = records()
        while true {
            let step = sqlite3_step(raw)
            if step == SQLITE_DONE { break }
            guard step == SQLITE_ROW else {
                throw SQLitePageReader.Failure(description: "cannot read the item table: \(String(cString: sqlite3_errstr(step)))")
            }
            guard sqlite3_column_type(raw, 2) != SQLITE_NULL else { continue }
            let seq = sqlite3_column_int64(raw, 2)
            guard seq >= 1 else { continue }
            let at = sqlite3_column_type(raw, 4) == SQLITE_NULL ? nil : sqlite3_column_int64(raw, 4)
            try records.add(
                Place(
                    id: sqlite3_column_int64(raw, 0), published: sqlite3_column_int64(raw, 1), seq: seq,
                    preview: sqlite3_column_type(raw, 3) == SQLITE_NULL ? nil : sqlite3_column_int64(raw, 3),
                    at: at, size: Int(sqlite3_column_int64(raw, 5))))
        }
        try records.flush()
    }
}
