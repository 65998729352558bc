import PostgresWire
import WarmfeedCore

extension PostgresFeedStore {
    /// The prepared page for `request` on this thread's own libpq connection
    /// (`ThreadConnections`), within `queryTimeout`: `.some(page)` (nil when
    /// no such page exists), or nil when this thread has no connection to read
    /// on (the caller then reads through the pool).
    ///
    /// The same statements, the same rules (`PreparedPageBuilder`) and the
    /// same failures as the pool's read: a query's own error as it is, no
    /// answer in time as `StoreUnavailable`, which the admin view shows.
    func preparedPageOnThisThread(_ request: PageRequest, size: Int, tag: UInt32) throws -> PreparedPage?? {
        let statement: (name: String, sql: String, parameters: [Int64])
        switch request {
        case .number(let number):
            guard number >= 1 else { return .some(nil) }
            statement = ("warmfeed_page_number", PreparedPageStatement.ByNumber.sql, [Int64(number - 1) * Int64(size), Int64(size)])
        case .after(let cursor):
            statement = ("warmfeed_page_after", PreparedPageStatement.After.sql, [cursor.published, cursor.id, Int64(size)])
        case .before(let cursor):
            statement = ("warmfeed_page_before", PreparedPageStatement.Before.sql, [cursor.published, cursor.id, Int64(size)])
        }
        let epoch = epoch
        let page: PreparedPage??
        do {
            page = try threadConnections.read(until: .now + queryTimeout) { connection throws(PQProblem) -> PreparedPage? in
                let rows = try connection.execute(statement.name, statement.sql, statement.parameters, until: .now + queryTimeout)
                do {
                    return try Self.preparedPage(rows, request: request, size: size, tag: tag, epoch: epoch)
                } catch {
                    throw PQProblem("a page's row did not decode: \(error)", sqlState: "XX000")
                }
            }
        } catch where error.isQueryError {
            // PostgreSQL answered (with an error of the query's own): it is up.
            throw error
        } catch {
            let reason = error.timedOut
                ? StoreUnavailable("PostgreSQL at \(location.host):\(location.port) did not answer within \(queryTimeout)")
                : StoreUnavailable("PostgreSQL at \(location.host):\(location.port): \(error)")
            noteDown(reason, listener: false)
            throw reason
        }
        guard let page else { return nil }
        noteAnswered()
        return page
    }

    /// A prepared page from the rows of a `PreparedPageStatement` (cells 0–10
    /// the item, 11 the feed's size, 12 the prepared bytes).
    static func preparedPage(_ rows: PQRows, request: PageRequest, size: Int, tag: UInt32, epoch: UInt32) throws -> PreparedPage? {
        try preparedPage(request, rows: rows.count, size: size, tag: tag, epoch: epoch) { row, whole, builder in
            guard let id = rows.int64(row, 0), let published = rows.int64(row, 8), let total = rows.int64(row, 11) else {
                throw PQProblem("a row without its id, date or count")
            }
            let prepared = rows.bytes(row, 12)
            let current = builder.isCurrent(prepared)
            builder.add(
                id: id, published: published, seq: rows.int64(row, 9) ?? 0, preview: rows.int64(row, 10),
                hasPicture: rows.bytes(row, 5) != nil, prepared: current ? prepared : nil,
                item: whole || !current ? try item(rows, row) : nil
            )
            return Int(total)
        }
    }

    /// The item in cells 0–10 of `row`.
    static func item(_ rows: PQRows, _ row: Int) throws -> FeedItem {
        guard let id = rows.int64(row, 0), let guid = rows.string(row, 1), let title = rows.string(row, 2),
              let summary = rows.string(row, 3), let published = rows.int64(row, 8)
        else { throw PQProblem("an item row with a NULL where the schema has none") }
        return FeedItem(
            id: id, guid: guid, title: title, summary: summary, link: rows.string(row, 4), imageURL: rows.string(row, 5),
            imageWidth: rows.int64(row, 6).map(Int.init), imageHeight: rows.int64(row, 7).map(Int.init),
            published: published, seq: rows.int64(row, 9), preview: rows.int64(row, 10)
        )
    }
}
