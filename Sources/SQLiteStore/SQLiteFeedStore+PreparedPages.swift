import Foundation
import WarmfeedCore

/// Cold pages from rows rendered ahead: where each row is, from the covering
/// index, and its bytes, from the row file (`SQLiteRowLog`).
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
            var places: [SQLitePageIndex.Place] = []
            places.reserveCapacity(size)
            func read(_ sql: String, _ arguments: [Int64]) throws {
                try connection.query(sql, arguments) { row in
                    places.append(
                        SQLitePageIndex.Place(
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
            let (bytes, spans) = readRows(of: places)
            var builder = PreparedPageBuilder(tag: tag, epoch: epoch, capacity: size)
            try bytes.withUnsafeBytes { bytes in
                for (place, span) in zip(places, spans) {
                    let found = span.flatMap { SQLiteRowLog.record(in: UnsafeRawBufferPointer(rebasing: bytes[$0]), id: place.id) }
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

    /// Page `number` from the page index and the row file alone, with no
    /// SQLite step: `.some(nil)` when there is no such page; nil when the
    /// index cannot answer now (a writer at work, a row to render from its
    /// item), and SQLite is asked.
    func indexedPage(number: Int, size: Int, tag: UInt32) -> PreparedPage?? {
        guard number >= 1 else { return .some(nil) }
        // An empty feed has a first page, empty.
        return indexedPage(size: size, tag: tag, emptyFeedHasThePage: number == 1) { count in
            let top = count - Int64(number - 1) * Int64(size)
            return top >= 1 ? max(1, top - Int64(size) + 1)...top : nil
        } keep: { places, _ in
            places
        }
    }

    /// The page of a cursor from the page index alone: the rank file names
    /// the cursor's own item's rank, and the records read hold that rank too
    /// (then dropped), so the index is seen to name that item at that date.
    /// nil when it does not (an item moved or changed, a rank file behind),
    /// and SQLite reads the page.
    func indexedPage(_ request: PageRequest, cursor: WarmfeedCore.Cursor, size: Int, tag: UInt32) -> PreparedPage?? {
        let older: Bool
        switch request {
        case .number: return nil
        case .after: older = true
        case .before: older = false
        }
        var named: Int64?
        return indexedPage(size: size, tag: tag) { [index] count in
            guard let rank = index.rank(ofItem: cursor.id), rank <= count else { return 0...0 }
            named = rank
            return older ? max(1, rank - Int64(size))...rank : rank...min(count, rank + Int64(size))
        } keep: { places, _ in
            var places = places
            // Highest rank first: the cursor's own record is first for an older page, last for a newer one.
            guard let own = older ? places.first : places.last, own.seq == named, own.id == cursor.id, own.published == cursor.published else {
                return nil
            }
            if older { places.removeFirst() } else { places.removeLast() }
            return places
        }
    }

    /// A page of the ranks `ranks(count)` names (highest first), as `keep`
    /// trims them (nil: the index does not agree; an empty list: no such
    /// page), read from the page index and the row file; nil when the index
    /// cannot answer.
    private func indexedPage(
        size: Int, tag: UInt32, emptyFeedHasThePage: Bool = false, ranks: (Int64) -> ClosedRange<Int64>?,
        keep: ([SQLitePageIndex.Place], Int64) -> [SQLitePageIndex.Place]?
    ) -> PreparedPage?? {
        guard let found = index.places(ranks), let places = keep(found.places, found.count) else { return nil }
        guard !places.isEmpty else {
            return found.count == 0 && emptyFeedHasThePage
                ? PreparedPage(rows: [], bytes: [], total: 0, firstPosition: 0, older: nil, newer: nil) : .some(nil)
        }
        let (bytes, spans) = readRows(of: places)
        var builder = PreparedPageBuilder(tag: tag, epoch: epoch, capacity: size)
        let whole = bytes.withUnsafeBytes { bytes -> Bool in
            for (place, span) in zip(places, spans) {
                guard let found = span.flatMap({ SQLiteRowLog.record(in: UnsafeRawBufferPointer(rebasing: bytes[$0]), id: place.id) }) else { return false }
                let row = builder.check(found.prepared)
                guard row.isCurrent else { return false }
                builder.add(id: place.id, published: place.published, seq: place.seq, preview: place.preview, hasPicture: found.hasPicture, row: row, item: nil)
            }
            return true
        }
        guard whole else { return nil }
        return .some(builder.page(total: Int(found.count)))
    }

    /// The records of `places` read from the row file, with where each one
    /// sits in the bytes (nil for a row with no place, or one the file does
    /// not hold whole). Records lying close together are read with one `pread`
    /// (rows prepared together are side by side, so a page is usually one
    /// read; a row prepared again since sits apart, read on its own).
    private func readRows(of places: [SQLitePageIndex.Place]) -> (bytes: [UInt8], spans: [Range<Int>?]) {
        var runs: [(start: Int64, end: Int64, members: [(index: Int, at: Int64)])] = []
        let placed = places.indices.compactMap { index in places[index].at.map { (index: index, at: $0) } }
        for member in placed.sorted(by: { $0.at < $1.at }) {
            let end = member.at + Int64(places[member.index].size)
            if let last = runs.indices.last, member.at <= runs[last].end + 4096 {
                runs[last].end = max(runs[last].end, end)
                runs[last].members.append(member)
            } else {
                runs.append((member.at, end, [member]))
            }
        }
        let wanted = runs.reduce(0) { $0 + Int($1.end - $1.start) }
        var spans = [Range<Int>?](repeating: nil, count: places.count)
        let bytes = [UInt8](unsafeUninitializedCapacity: wanted) { buffer, initialized in
            var next = 0
            for run in runs {
                let length = Int(run.end - run.start)
                let count = rows.read(at: run.start, into: UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[next..<(next + length)])))
                // Bytes past the file's end: zeros, which no span reaches.
                if count < length { _ = buffer[(next + count)..<(next + length)].initialize(from: repeatElement(0, count: length - count)) }
                for member in run.members {
                    let start = next + Int(member.at - run.start)
                    let end = start + places[member.index].size
                    if end <= next + count { spans[member.index] = start..<end }
                }
                next += length
            }
            initialized = wanted
        }
        return (bytes, spans)
    }

    public func preparedPage(_ request: PageRequest, size: Int, tag: UInt32) async throws -> PreparedPage? {
        try preparedPageAtOnce(request, size: size, tag: tag)
    }
}
