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
