import PostgresNIO
import WarmfeedCore

extension PostgresFeedStore {
    /// The columns a read takes, in the order `item(_:)` decodes them.
    static let columns = "id, guid, title, summary, link, image_url, image_width, image_height, published, seq, preview"
    /// The feed's size: `seq` is dense from 1, so its highest value, by an index seek.
    static let total = "(SELECT COALESCE(MAX(seq), 0) FROM item)"

    /// How many items the feed holds.
    public func count() async throws -> Int {
        let rows = try await rows(PostgresQuery(unsafeSQL: "SELECT \(Self.total)"))
        return try rows.first.map { try Int($0.decode(Int64.self)) } ?? 0
    }

    /// The page for `request`, `size` items long, in one round trip (the
    /// feed's size comes along); nil when no such page exists.
    public func page(_ request: PageRequest, size: Int) async throws -> Page? {
        precondition(size > 0)
        let rows: [(FeedItem, Int)]
        switch request {
        case .number(let number):
            guard number >= 1 else { return nil }
            rows = try await self.rows(PageStatement.ByNumber(skip: Int64(number - 1) * Int64(size), limit: Int64(size)))
        case .after(let cursor):
            rows = try await self.rows(PageStatement.After(published: cursor.published, id: cursor.id, limit: Int64(size)))
        case .before(let cursor):
            rows = try await self.rows(PageStatement.Before(published: cursor.published, id: cursor.id, limit: Int64(size)))
        }
        var items = rows.map(\.0)
        let total = rows.last?.1 ?? 0
        if case .before = request { items.reverse() }
        // No rows for page 1 means an empty feed, which still has its (empty) first page.
        if items.isEmpty, case .number(1) = request { return Page(items: [], total: 0, firstPosition: 0, older: nil, newer: nil) }
        return Page(ranked: items, total: total, cursor: cursor(of:))
    }

    /// The page for `request` with its rows' prepared bytes of `tag`, in one round trip.
    /// Read on this thread's own connection where it has one, else through the pool.
    public func preparedPage(_ request: PageRequest, size: Int, tag: UInt32) async throws -> PreparedPage? {
        precondition(size > 0)
        try throwIfDown()
        if let page = try preparedPageOnThisThread(request, size: size, tag: tag) { return page }
        let rows: [PostgresRow]
        switch request {
        case .number(let number):
            guard number >= 1 else { return nil }
            rows = try await self.rows(PreparedPageStatement.ByNumber(skip: Int64(number - 1) * Int64(size), limit: Int64(size)))
        case .after(let cursor):
            rows = try await self.rows(PreparedPageStatement.After(published: cursor.published, id: cursor.id, limit: Int64(size)))
        case .before(let cursor):
            rows = try await self.rows(PreparedPageStatement.Before(published: cursor.published, id: cursor.id, limit: Int64(size)))
        }
        return try Self.preparedPage(request, rows: rows.count, size: size, tag: tag, epoch: epoch) { index, whole, builder in
            let cells = PostgresRandomAccessRow(rows[index])
            let prepared = cells[12].bytes
            let id = try cells[0].decode(Int64.self)
            let published = try cells[8].decode(Int64.self)
            let seq = try cells[9].decode(Int64?.self) ?? 0
            let preview = try cells[10].decode(Int64?.self)
            let hasPicture = cells[5].bytes != nil
            let current = prepared?.withUnsafeReadableBytes { builder.isCurrent($0) } ?? false
            let item = whole || !current ? try Self.item(cells) : nil
            if current, let bytes = prepared {
                bytes.withUnsafeReadableBytes { raw in
                    builder.add(id: id, published: published, seq: seq, preview: preview, hasPicture: hasPicture, prepared: raw, item: item)
                }
            } else {
                builder.add(id: id, published: published, seq: seq, preview: preview, hasPicture: hasPicture, prepared: nil, item: item)
            }
            return Int(try cells[11].decode(Int64.self))
        }
    }

    /// The rules both reads of a prepared page share: `count` rows in the
    /// order read, each added by `add` (given whether to read its item whole,
    /// and returning the feed's size); only what the page needs is read whole:
    /// its first row (it names the page) and rows not prepared with `tag`.
    static func preparedPage(
        _ request: PageRequest, rows count: Int, size: Int, tag: UInt32, epoch: UInt32,
        add: (_ index: Int, _ whole: Bool, _ builder: inout PreparedPageBuilder) throws -> Int
    ) throws -> PreparedPage? {
        if count == 0, case .number(1) = request {
            return PreparedPage(rows: [], bytes: [], total: 0, firstPosition: 0, older: nil, newer: nil)
        }
        var builder = PreparedPageBuilder(tag: tag, epoch: epoch, capacity: size)
        var total = 0
        // A "newer items" page is read oldest first: its first row is the last read.
        var before = false
        if case .before = request { before = true }
        let firstRead = before ? count - 1 : 0
        for index in 0..<count { total = try add(index, index == firstRead, &builder) }
        if before { builder.reverse() }
        return builder.page(total: total)
    }

    /// An item from the first eleven cells of a row of `columns`.
    static func item(_ cells: PostgresRandomAccessRow) throws -> FeedItem {
        FeedItem(
            id: try cells[0].decode(Int64.self), guid: try cells[1].decode(String.self), title: try cells[2].decode(String.self),
            summary: try cells[3].decode(String.self), link: try cells[4].decode(String?.self), imageURL: try cells[5].decode(String?.self),
            imageWidth: try cells[6].decode(Int64?.self).map(Int.init), imageHeight: try cells[7].decode(Int64?.self).map(Int.init),
            published: try cells[8].decode(Int64.self), seq: try cells[9].decode(Int64?.self), preview: try cells[10].decode(Int64?.self)
        )
    }

    public func prepareRows(
        tag: UInt32, sweep: Bool, after id: Int64, limit: Int, render: @escaping @Sendable (FeedItem) -> [UInt8]?
    ) async throws -> (kept: Int, last: Int64)? {
        let logger = logger
        let tagBytes = ByteBuffer(bytes: PreparedRowTag.bytes(tag))
        return try await withConnection { connection in
            try await connection.withTransaction(logger: logger) { connection -> (kept: Int, last: Int64)? in
                // The batch's items locked until the commit; those another node holds are skipped.
                let query: PostgresQuery = sweep
                    ? """
                    SELECT \(unescaped: Self.columns), 0::bigint FROM item
                    WHERE id > \(id) AND (prepared IS NULL OR substring(prepared from 1 for 4) <> \(tagBytes))
                    ORDER BY id LIMIT \(Int64(limit)) FOR UPDATE SKIP LOCKED
                    """
                    : """
                    SELECT \(unescaped: Self.columns), 0::bigint FROM item WHERE prepared IS NULL AND id > \(id)
                    ORDER BY id LIMIT \(Int64(limit)) FOR UPDATE SKIP LOCKED
                    """
                var items: [FeedItem] = []
                for try await row in try await connection.query(query, logger: logger) { items.append(try Self.item(row).0) }
                guard let last = items.last?.id else { return nil }
                var ids: [Int64] = [], bytes: [ByteBuffer] = []
                for item in items {
                    guard let id = item.id, let rendered = render(item) else { continue }
                    ids.append(id)
                    bytes.append(ByteBuffer(bytes: rendered))
                }
                if !ids.isEmpty {
                    try await connection.query("""
                        UPDATE item SET prepared = u.prepared FROM UNNEST(\(ids)::bigint[], \(bytes)::bytea[]) AS u(id, prepared)
                        WHERE item.id = u.id
                        """, logger: logger)
                }
                return (ids.count, last)
            }
        }
    }

    /// The item with `id`, or nil.
    public func item(id: Int64) async throws -> FeedItem? {
        let rows = try await rows("SELECT id, guid, title, summary, link, image_url, image_width, image_height, published, seq, preview, 0::bigint FROM item WHERE id = \(id)")
        return try rows.first.map { try Self.item($0).0 }
    }

    /// An item (and the trailing column: the feed's size) from a row of `columns`.
    static func item(_ row: PostgresRow) throws -> (FeedItem, Int) {
        let (id, guid, title, summary, link, imageURL, width, height, published, seq, preview, total) = try row.decode(
            (Int64, String, String, String, String?, String?, Int64?, Int64?, Int64, Int64?, Int64?, Int64).self)
        let item = FeedItem(
            id: id, guid: guid, title: title, summary: summary, link: link, imageURL: imageURL,
            imageWidth: width.map(Int.init), imageHeight: height.map(Int.init), published: published, seq: seq, preview: preview
        )
        return (item, Int(total))
    }

    /// A value kept beside the items (the source's validators, say), or nil.
    public func note(_ key: String) async throws -> String? {
        try await rows("SELECT value FROM note WHERE key = \(key)").first.map { try $0.decode(String.self) }
    }

    /// Keeps `value` under `key` (nil removes it).
    public func setNote(_ key: String, _ value: String?) async throws {
        if let value {
            _ = try await rows("INSERT INTO note (key, value) VALUES (\(key), \(value)) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
        } else {
            _ = try await rows("DELETE FROM note WHERE key = \(key)")
        }
    }

    /// Keeps each item's picture preview, in one statement; not a change of
    /// the feed (the revision stays, cached pages stay).
    public func setPreviews(_ previews: [Int64: Int64]) async throws {
        guard !previews.isEmpty else { return }
        let ids = Array(previews.keys)
        let values = ids.map { previews[$0]! }
        _ = try await rows("""
            UPDATE item SET preview = p.preview FROM UNNEST(\(ids)::bigint[], \(values)::bigint[]) AS p(id, preview)
            WHERE item.id = p.id AND item.preview IS DISTINCT FROM p.preview
            """)
    }
}

/// The three page reads as prepared statements: each pooled connection
/// parses and plans them once, and a cold page costs one round trip.
enum PageStatement {
    /// A deep link: the page whose first item has rank ≤ the feed's size − skip.
    struct ByNumber: PostgresPreparedStatement {
        static let sql = "SELECT \(PostgresFeedStore.columns), \(PostgresFeedStore.total) FROM item WHERE seq <= \(PostgresFeedStore.total) - $1 ORDER BY seq DESC LIMIT $2"
        typealias Row = (FeedItem, Int)
        var skip: Int64
        var limit: Int64

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(skip)
            bindings.append(limit)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try PostgresFeedStore.item(row) }
    }

    /// Following a sentinel: the items just older than (published, id).
    struct After: CursorStatement {
        static let sql = "SELECT \(PostgresFeedStore.columns), \(PostgresFeedStore.total) FROM item WHERE (published, id) < ($1, $2) ORDER BY published DESC, id DESC LIMIT $3"
        var published: Int64
        var id: Int64
        var limit: Int64
    }

    /// A "newer items" link: the items just newer than (published, id), oldest first.
    struct Before: CursorStatement {
        static let sql = "SELECT \(PostgresFeedStore.columns), \(PostgresFeedStore.total) FROM item WHERE (published, id) > ($1, $2) ORDER BY published ASC, id ASC LIMIT $3"
        var published: Int64
        var id: Int64
        var limit: Int64
    }

    static func bindings(_ values: Int64...) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values { bindings.append(value) }
        return bindings
    }
}

/// The three page reads with each row's prepared bytes: the columns, the
/// feed's size, then `prepared` (cells 0–10, 11 and 12).
enum PreparedPageStatement {
    static let columns = "\(PostgresFeedStore.columns), \(PostgresFeedStore.total), prepared"

    struct ByNumber: PostgresPreparedStatement {
        static let sql = "SELECT \(columns) FROM item WHERE seq <= \(PostgresFeedStore.total) - $1 ORDER BY seq DESC LIMIT $2"
        typealias Row = PostgresRow
        var skip: Int64
        var limit: Int64
        func makeBindings() throws -> PostgresBindings { PageStatement.bindings(skip, limit) }
        func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
    }

    struct After: PreparedCursorStatement {
        static let sql = "SELECT \(columns) FROM item WHERE (published, id) < ($1, $2) ORDER BY published DESC, id DESC LIMIT $3"
        var published: Int64
        var id: Int64
        var limit: Int64
    }

    struct Before: PreparedCursorStatement {
        static let sql = "SELECT \(columns) FROM item WHERE (published, id) > ($1, $2) ORDER BY published ASC, id ASC LIMIT $3"
        var published: Int64
        var id: Int64
        var limit: Int64
    }
}

/// A prepared page read from a cursor's (published, id), `limit` rows long, its rows decoded by the reader.
protocol PreparedCursorStatement: PostgresPreparedStatement where Row == PostgresRow {
    var published: Int64 { get }
    var id: Int64 { get }
    var limit: Int64 { get }
}

extension PreparedCursorStatement {
    func makeBindings() throws -> PostgresBindings { PageStatement.bindings(published, id, limit) }
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

/// A page read from a cursor's (published, id), `limit` rows long.
protocol CursorStatement: PostgresPreparedStatement where Row == (FeedItem, Int) {
    var published: Int64 { get }
    var id: Int64 { get }
    var limit: Int64 { get }
}

extension CursorStatement {
    func makeBindings() throws -> PostgresBindings { PageStatement.bindings(published, id, limit) }
    func decodeRow(_ row: PostgresRow) throws -> (FeedItem, Int) { try PostgresFeedStore.item(row) }
}
