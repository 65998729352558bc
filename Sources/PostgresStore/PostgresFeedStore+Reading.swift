import PostgresWire
import WarmfeedCore

extension PostgresFeedStore {
    /// The columns a read takes, in the order `item(_:_:)` decodes them.
    static let columns = "id, guid, title, summary, link, image_url, image_width, image_height, published, seq, preview, source, source_title, source_link"
    /// How many cells `columns` takes: what a read adds comes after them.
    static let columnCount = 14
    /// The feed's size: `seq` is dense from 1, so its highest value, by an index seek.
    static let total = "(SELECT COALESCE(MAX(seq), 0) FROM item)"

    /// How many items the feed holds.
    public func count() async throws -> Int {
        try await onReader { connection, deadline throws(PQProblem) -> Int in
            Int(try connection.query("SELECT \(Self.total)", until: deadline).int64(0, 0) ?? 0)
        }
    }

    /// The page for `request`, `size` items long, in one round trip (the
    /// feed's size comes along); nil when no such page exists.
    public func page(_ request: PageRequest, size: Int) async throws -> Page? {
        precondition(size > 0)
        guard let statement = PageStatement.statement(request, size: size, prepared: false) else { return nil }
        let (items, total) = try await onReader { connection, deadline throws(PQProblem) -> ([FeedItem], Int) in
            let rows = try connection.execute(statement.name, statement.sql, statement.parameters, until: deadline)
            var items: [FeedItem] = []
            items.reserveCapacity(rows.count)
            for row in 0..<rows.count { items.append(try Self.item(rows, row)) }
            return (items, rows.count > 0 ? Int(rows.int64(rows.count - 1, Self.columnCount) ?? 0) : 0)
        }
        var ranked = items
        if case .before = request { ranked.reverse() }
        // No rows for page 1 means an empty feed, which still has its (empty) first page.
        if ranked.isEmpty, case .number(1) = request { return Page(items: [], total: 0, firstPosition: 0, older: nil, newer: nil) }
        return Page(ranked: ranked, total: total, cursor: cursor(of:))
    }

    /// The page for `request` with its rows' prepared bytes of `tag`: from
    /// the node's copy when it is current, else in one round trip, read on
    /// this thread's own connection where it has one, else on a reader thread.
    public func preparedPage(_ request: PageRequest, size: Int, tag: UInt32) async throws -> PreparedPage? {
        precondition(size > 0)
        if let page = try preparedPageWithoutWaiting(request, size: size, tag: tag) { return page }
        try throwIfDown()
        if let page = try preparedPageOnThisThread(request, size: size, tag: tag) { return page }
        guard let statement = PageStatement.statement(request, size: size, prepared: true) else { return nil }
        let epoch = epoch
        return try await onReader { connection, deadline throws(PQProblem) -> PreparedPage? in
            let rows = try connection.execute(statement.name, statement.sql, statement.parameters, until: deadline)
            return try Self.decodedPage(rows, request: request, size: size, tag: tag, epoch: epoch)
        }
    }

    /// The page from the node's copy (`NodeCopy`), when it keeps one that has
    /// caught up with every write this node has heard of; nil otherwise. Not
    /// while PostgreSQL is down: its pages get the same fast 503 as ever.
    public func preparedPageWithoutWaiting(_ request: PageRequest, size: Int, tag: UInt32) throws -> PreparedPage?? {
        guard let copy else { return nil }
        try throwIfDown()
        return copy.page(request, size: size, tag: tag, epoch: epoch, writes: revision)
    }

    /// The rules both reads of a prepared page share: `count` rows in the
    /// order read, each added by `add` (returning the feed's size; it reads
    /// an item whole only for a row not prepared with `tag`).
    static func preparedPage(
        _ request: PageRequest, rows count: Int, size: Int, tag: UInt32, epoch: UInt32,
        add: (_ index: Int, _ builder: inout PreparedPageBuilder) throws -> Int
    ) throws -> PreparedPage? {
        if count == 0, case .number(1) = request {
            return PreparedPage(rows: [], bytes: [], total: 0, firstPosition: 0, older: nil, newer: nil)
        }
        var builder = PreparedPageBuilder(tag: tag, epoch: epoch, capacity: size)
        var total = 0
        for index in 0..<count { total = try add(index, &builder) }
        // A "newer items" page is read oldest first.
        if case .before = request { builder.reverse() }
        return builder.page(total: total)
    }

    public func prepareRows(
        tag: UInt32, sweep: Bool, after id: Int64, limit: Int, render: @escaping @Sendable (FeedItem) -> [UInt8]?
    ) async throws -> (kept: Int, last: Int64)? {
        // The batch's items locked until the commit; those another node holds are skipped.
        let select =
            sweep
            ? """
            SELECT \(Self.columns) FROM item
            WHERE id > $1 AND (prepared IS NULL OR substring(prepared from 1 for 4) <> $3)
            ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED
            """
            : "SELECT \(Self.columns) FROM item WHERE prepared IS NULL AND id > $1 ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED"
        var parameters: [PQValue] = [.int64(id), .int64(Int64(limit))]
        if sweep { parameters.append(.bytes(PreparedRowTag.bytes(tag))) }
        let selectParameters = parameters
        return try await onReader(within: .seconds(30), background: true) { connection, deadline throws(PQProblem) -> (kept: Int, last: Int64)? in
            try Self.inTransaction(connection, until: deadline) { () throws(PQProblem) -> (kept: Int, last: Int64)? in
                let rows = try connection.query(select, selectParameters, until: deadline)
                var items: [FeedItem] = []
                for row in 0..<rows.count { items.append(try Self.item(rows, row)) }
                guard let last = items.last?.id else { return nil }
                var ids: [Int64] = []
                var bytes: [[UInt8]] = []
                for item in items {
                    guard let id = item.id, let rendered = render(item) else { continue }
                    ids.append(id)
                    bytes.append(rendered)
                }
                if !ids.isEmpty {
                    try connection.query(
                        """
                        UPDATE item SET prepared = u.prepared FROM UNNEST($1::bigint[], $2::bytea[]) AS u(id, prepared)
                        WHERE item.id = u.id
                        """, [.int64s(ids), .byteas(bytes)], until: deadline)
                }
                return (ids.count, last)
            }
        }
    }

    public func forgetPreparedRows(_ ids: [Int64]) async throws {
        guard !ids.isEmpty else { return }
        try await onReader(within: .seconds(30), background: true) { connection, deadline throws(PQProblem) -> Void in
            try connection.query("UPDATE item SET prepared = NULL WHERE id = ANY($1::bigint[])", [.int64s(ids)], until: deadline)
        }
    }

    /// Runs `body` between BEGIN and COMMIT on `connection`; when it throws,
    /// rolls back, or, when that cannot be done in time, closes the
    /// connection, so no transaction is left open on a reader's connection.
    static func inTransaction<Value>(
        _ connection: PQConnection, until deadline: ContinuousClock.Instant, _ body: () throws(PQProblem) -> Value
    ) throws(PQProblem) -> Value {
        try connection.query("BEGIN", until: deadline)
        do {
            let value = try body()
            try connection.query("COMMIT", until: deadline)
            return value
        } catch {
            if connection.isOpen, (try? connection.query("ROLLBACK", until: .now + .seconds(5))) == nil { connection.close() }
            throw error
        }
    }

    /// The item with `id`, or nil.
    public func item(id: Int64) async throws -> FeedItem? {
        try await onReader { connection, deadline throws(PQProblem) -> FeedItem? in
            let rows = try connection.execute("warmfeed_item", "SELECT \(Self.columns) FROM item WHERE id = $1", [id], until: deadline)
            return rows.count > 0 ? try Self.item(rows, 0) : nil
        }
    }

    public func sources() async throws -> [SourceEntry] {
        try await onReader { connection, deadline throws(PQProblem) -> [SourceEntry] in
            let rows = try connection.query("SELECT id, key, state FROM source ORDER BY id", [], until: deadline)
            return (0..<rows.count).compactMap { row in
                guard let id = rows.int64(row, 0), let key = rows.string(row, 1) else { return nil }
                return SourceEntry(id: id, key: key, state: rows.string(row, 2))
            }
        }
    }

    /// A value kept beside the items (the source's validators, say), or nil.
    public func note(_ key: String) async throws -> String? {
        try await onReader { connection, deadline throws(PQProblem) -> String? in
            try connection.query("SELECT value FROM note WHERE key = $1", [.text(key)], until: deadline).string(0, 0)
        }
    }

    /// Keeps `value` under `key` (nil removes it).
    public func setNote(_ key: String, _ value: String?) async throws {
        try await onReader { connection, deadline throws(PQProblem) -> Void in
            if let value {
                try connection.query(
                    "INSERT INTO note (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    [.text(key), .text(value)], until: deadline)
            } else {
                try connection.query("DELETE FROM note WHERE key = $1", [.text(key)], until: deadline)
            }
        }
    }

    /// Keeps each item's picture preview, in one statement; not a change of
    /// the feed (the revision stays, cached pages stay).
    public func setPreviews(_ previews: [Int64: Int64]) async throws {
        guard !previews.isEmpty else { return }
        let ids = Array(previews.keys)
        let values = ids.map { previews[$0]! }
        try await onReader { connection, deadline throws(PQProblem) -> Void in
            try connection.query(
                """
                UPDATE item SET preview = p.preview FROM UNNEST($1::bigint[], $2::bigint[]) AS p(id, preview)
                WHERE item.id = p.id AND item.preview IS DISTINCT FROM p.preview
                """, [.int64s(ids), .int64s(values)], until: deadline)
        }
    }
}

/// The three page reads, each prepared once on a connection (parsed and
/// planned once) under its name, so a cold page costs one round trip:
/// cells 0–10 the item, 11 the feed's size.
enum PageStatement {
    /// A deep link: the page whose first item has rank ≤ the feed's size − skip.
    enum ByNumber {
        static let sql =
            "SELECT \(PostgresFeedStore.columns), \(PostgresFeedStore.total) FROM item WHERE seq <= \(PostgresFeedStore.total) - $1 ORDER BY seq DESC LIMIT $2"
    }

    /// Following a sentinel: the items just older than (published, id).
    enum After {
        static let sql =
            "SELECT \(PostgresFeedStore.columns), \(PostgresFeedStore.total) FROM item WHERE (published, id) < ($1, $2) ORDER BY published DESC, id DESC LIMIT $3"
    }

    /// A "newer items" link: the items just newer than (published, id), oldest first.
    enum Before {
        static let sql =
            "SELECT \(PostgresFeedStore.columns), \(PostgresFeedStore.total) FROM item WHERE (published, id) > ($1, $2) ORDER BY published ASC, id ASC LIMIT $3"
    }

    /// The statement that reads `request`'s page, `size` rows long, with each
    /// row's prepared bytes (cell 12) when `prepared`; nil for a page number below 1.
    static func statement(_ request: PageRequest, size: Int, prepared: Bool) -> (name: String, sql: String, parameters: [Int64])? {
        switch request {
        case .number(let number):
            guard number >= 1 else { return nil }
            return prepared
                ? ("warmfeed_prepared_number", PreparedPageStatement.ByNumber.sql, [Int64(number - 1) * Int64(size), Int64(size)])
                : ("warmfeed_page_number", ByNumber.sql, [Int64(number - 1) * Int64(size), Int64(size)])
        case .after(let cursor):
            return prepared
                ? ("warmfeed_prepared_after", PreparedPageStatement.After.sql, [cursor.published, cursor.id, Int64(size)])
                : ("warmfeed_page_after", After.sql, [cursor.published, cursor.id, Int64(size)])
        case .before(let cursor):
            return prepared
                ? ("warmfeed_prepared_before", PreparedPageStatement.Before.sql, [cursor.published, cursor.id, Int64(size)])
                : ("warmfeed_page_before", Before.sql, [cursor.published, cursor.id, Int64(size)])
        }
    }
}

/// The three page reads with each row's prepared bytes: the columns, the
/// feed's size, then `prepared` (cells 0–13, 14 and 15).
enum PreparedPageStatement {
    static let columns = "\(PostgresFeedStore.columns), \(PostgresFeedStore.total), prepared"

    enum ByNumber {
        static let sql = "SELECT \(columns) FROM item WHERE seq <= \(PostgresFeedStore.total) - $1 ORDER BY seq DESC LIMIT $2"
    }

    enum After {
        static let sql = "SELECT \(columns) FROM item WHERE (published, id) < ($1, $2) ORDER BY published DESC, id DESC LIMIT $3"
    }

    enum Before {
        static let sql = "SELECT \(columns) FROM item WHERE (published, id) > ($1, $2) ORDER BY published ASC, id ASC LIMIT $3"
    }
}
