import PostgresWire
import WarmfeedCore

extension PostgresFeedStore {
    /// The prepared page for `request` on this thread's own libpq connection
    /// (`ThreadConnections`), within `queryTimeout`: `.some(page)` (nil when
    /// no such page exists), or nil when this thread has no connection to read
    /// on (the caller then reads on a reader thread).
    ///
    /// The same statements, the same rules (`PreparedPageBuilder`) and the
    /// same failures as a reader thread's read: a query's own error as it is, no
    /// answer in time as `StoreUnavailable`, which the admin view shows.
    func preparedPageOnThisThread(_ request: PageRequest, size: Int, tag: UInt32) throws -> PreparedPage?? {
        guard let statement = PageStatement.statement(request, size: size, prepared: true) else { return .some(nil) }
        let epoch = epoch
        let page: PreparedPage??
        do {
            page = try threadConnections.read(until: .now + queryTimeout) { connection throws(PQProblem) -> PreparedPage? in
                let rows = try connection.execute(statement.name, statement.sql, statement.parameters, until: .now + queryTimeout)
                return try Self.decodedPage(rows, request: request, size: size, tag: tag, epoch: epoch)
            }
        } catch  where error.isQueryError {
            // PostgreSQL answered (with an error of the query's own): it is up.
            throw error
        } catch {
            let reason = StoreUnavailable(PostgresProblem.explain(error, location, waited: queryTimeout))
            noteDown(reason, listener: false)
            throw reason
        }
        guard let page else { return nil }
        noteAnswered()
        return page
    }

    /// `preparedPage(_:request:…)`, a row that does not decode said as a query's error.
    static func decodedPage(_ rows: PQRows, request: PageRequest, size: Int, tag: UInt32, epoch: UInt32) throws(PQProblem) -> PreparedPage? {
        do {
            return try preparedPage(rows, request: request, size: size, tag: tag, epoch: epoch)
        } catch {
            throw PQProblem("a page's row did not decode: \(error)", sqlState: "XX000")
        }
    }

    /// A prepared page from the rows of a `PreparedPageStatement` (cells 0–10
    /// the item, 11 the feed's size, 12 the prepared bytes).
    static func preparedPage(_ rows: PQRows, request: PageRequest, size: Int, tag: UInt32, epoch: UInt32) throws -> PreparedPage? {
        try preparedPage(request, rows: rows.count, size: size, tag: tag, epoch: epoch) { row, builder in
            guard let id = rows.int64(row, 0), let published = rows.int64(row, 8), let total = rows.int64(row, PostgresFeedStore.columnCount) else {
                throw PQProblem("a row without its id, date or count")
            }
            let prepared = builder.check(rows.bytes(row, PostgresFeedStore.columnCount + 1))
            builder.add(
                id: id, published: published, seq: rows.int64(row, 9) ?? 0, preview: rows.int64(row, 10),
                hasPicture: rows.bytes(row, 5) != nil, row: prepared,
                item: prepared.isCurrent ? nil : try item(rows, row)
            )
            return Int(total)
        }
    }

    /// The item in the first `columnCount` cells of `row`.
    static func item(_ rows: PQRows, _ row: Int) throws(PQProblem) -> FeedItem {
        guard let id = rows.int64(row, 0), let guid = rows.string(row, 1), let title = rows.string(row, 2),
            let summary = rows.string(row, 3), let published = rows.int64(row, 8)
        else { throw PQProblem("an item row with a NULL where the schema has none") }
        return FeedItem(
            id: id, guid: guid, title: title, summary: summary, link: rows.string(row, 4), imageURL: rows.string(row, 5),
            imageWidth: rows.int64(row, 6).map(Int.init), imageHeight: rows.int64(row, 7).map(Int.init),
            published: published, seq: rows.int64(row, 9), preview: rows.int64(row, 10),
            source: rows.int64(row, 11) ?? 0, sourceTitle: rows.string(row, 12), sourceLink: rows.string(row, 13)
        )
    }
}
