import Foundation
import PageFiles
import WarmfeedCore

/// Cold pages from rows rendered ahead: where each row is, from the covering
/// index (or the page index), and its bytes, from the row file (`RowLog`).
extension SQLiteFeedStore {
    /// The prepared page for `request`, read on this thread: the places of
    /// its rows from the covering index `item_page`, their bytes from the row
    /// file, and whole items only for rows with no current prepared bytes.
    public func preparedPageAtOnce(_ request: PageRequest, size: Int, tag: UInt32) throws -> PreparedPage? {
        precondition(size > 0)
        switch request {
        case .number(let number):
            if let answer = indexedPage(number: number, size: size, tag: tag) { return answer }
        case .after(let cursor), .before(let cursor):
            if let answer = indexedPage(request, cursor: cursor, size: size, tag: tag) { return answer }
        }
        return try preparedPageFromSQLite(request, size: size, tag: tag)
    }

    /// `preparedPageAtOnce` as SQLite answers it: the places from `item_page`.
    func preparedPageFromSQLite(_ request: PageRequest, size: Int, tag: UInt32) throws -> PreparedPage? {
        try pages.read { connection -> PreparedPage? in
            var total = 0
            try connection.query(SQL.total, []) { total = Int($0.columnInteger(0) ?? 0) }
            var places: [PageIndex.Place] = []
            places.reserveCapacity(size)
            func read(_ sql: String, _ arguments: [Int64]) throws {
                try connection.query(sql, arguments) { row in
                    places.append(
                        PageIndex.Place(
                            id: row.columnInteger(0) ?? 0, published: row.columnInteger(1) ?? 0, seq: row.columnInteger(2) ?? 0,
                            preview: row.columnInteger(3), at: row.columnInteger(4), size: Int(row.columnInteger(5) ?? 0)))
                }
            }
            func seq(_ sql: String, _ cursor: WarmfeedCore.Cursor) throws -> Int64? {
                var seq: Int64?
                try connection.query(sql, [cursor.published, cursor.id]) { seq = $0.columnInteger(0) }
                return seq
            }
            switch request {
            case .number(let number):
                let top = Int64(total) - Int64(number - 1) * Int64(size)
                if total == 0, number == 1 {
                    return PreparedPage(rows: [], bytes: [], total: 0, firstPosition: 0, older: nil, newer: nil)
                }
                guard number >= 1, top >= 1 else { return nil }
                try read(SQL.placesDown, [top, Int64(size)])
            case .after(let cursor):
                guard let top = try seq(SQL.seqOlder, cursor) else { return nil }
                try read(SQL.placesDown, [top, Int64(size)])
            case .before(let cursor):
                guard let bottom = try seq(SQL.seqNewer, cursor) else { return nil }
                try read(SQL.placesUp, [bottom, Int64(size)])
                places.reverse()
            }
            let (bytes, spans) = index.readRows(of: places)
            var builder = PreparedPageBuilder(tag: tag, epoch: epoch, capacity: size)
            try bytes.withUnsafeBytes { bytes in
                for (place, span) in zip(places, spans) {
                    let found = span.flatMap { RowLog.record(in: UnsafeRawBufferPointer(rebasing: bytes[$0]), id: place.id) }
                    // A row with a place the file does not hold whole (another item's
                    // record there, a cut or a flipped header) is as corrupt as bad bytes.
                    let row = found.map { builder.check($0.prepared) } ?? (place.placed ? .corrupt : .missing)
                    var item: FeedItem?
                    if !row.isCurrent {
                        try connection.query(SQL.itemByID, [place.id]) { item = Self.item($0) }
                        // Gone since its place was read (this read sees one state; a guard all the same).
                        guard item != nil else { continue }
                    }
                    builder.add(
                        id: place.id, published: place.published, seq: place.seq, preview: place.preview,
                        hasPicture: item.map { $0.imageURL != nil } ?? found?.hasPicture ?? false,
                        row: row, item: item)
                }
            }
            return builder.page(total: total)
        }
    }

    /// Page `number` from the page index and the row file alone (`PageIndex.page`):
    /// `.some(nil)` when there is no such page; nil when SQLite must be asked.
    func indexedPage(number: Int, size: Int, tag: UInt32) -> PreparedPage?? {
        index.page(number: number, size: size, tag: tag, epoch: epoch)
    }

    /// A cursor's page from the page index and the row file alone; nil when SQLite must be asked.
    func indexedPage(_ request: PageRequest, cursor: WarmfeedCore.Cursor, size: Int, tag: UInt32) -> PreparedPage?? {
        index.page(request, cursor: cursor, size: size, tag: tag, epoch: epoch)
    }

    public func preparedPage(_ request: PageRequest, size: Int, tag: UInt32) async throws -> PreparedPage? {
        try preparedPageAtOnce(request, size: size, tag: tag)
    }
}
