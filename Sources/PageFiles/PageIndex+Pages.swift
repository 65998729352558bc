import WarmfeedCore

/// Pages read from the page index and the row file alone, with no step of
/// the store's engine: what a deep page costs on a store that keeps them.
extension PageIndex {
    /// Page `number`: `.some(nil)` when there is no such page; nil when the
    /// index cannot answer now (a writer at work, a row to render from its
    /// item, a header `trusts` refuses), and the store is asked.
    public func page(number: Int, size: Int, tag: UInt32, epoch: UInt32, trusts: (Header) -> Bool = { _ in true }) -> PreparedPage?? {
        guard number >= 1 else { return .some(nil) }
        // An empty feed has a first page, empty.
        return page(size: size, tag: tag, epoch: epoch, trusts: trusts, emptyFeedHasThePage: number == 1) { count in
            let top = count - Int64(number - 1) * Int64(size)
            return top >= 1 ? max(1, top - Int64(size) + 1)...top : nil
        } keep: { places, _ in
            places
        }
    }

    /// The page of a cursor: the rank file names the cursor's own item's
    /// rank, and the records read hold that rank too (then dropped), so the
    /// index is seen to name that item at that date. nil when it does not
    /// (an item moved or changed, a rank file behind), and the store reads
    /// the page.
    public func page(
        _ request: PageRequest, cursor: Cursor, size: Int, tag: UInt32, epoch: UInt32, trusts: (Header) -> Bool = { _ in true }
    ) -> PreparedPage?? {
        let older: Bool
        switch request {
        case .number: return nil
        case .after: older = true
        case .before: older = false
        }
        var named: Int64?
        return page(size: size, tag: tag, epoch: epoch, trusts: trusts) { count in
            guard let rank = rank(ofItem: cursor.id), rank <= count else { return 0...0 }
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
    private func page(
        size: Int, tag: UInt32, epoch: UInt32, trusts: (Header) -> Bool, emptyFeedHasThePage: Bool = false,
        ranks: (Int64) -> ClosedRange<Int64>?, keep: ([Place], Int64) -> [Place]?
    ) -> PreparedPage?? {
        guard let found = places(trusts: trusts, ranks), let places = keep(found.places, found.count) else { return nil }
        guard !places.isEmpty else {
            return found.count == 0 && emptyFeedHasThePage
                ? PreparedPage(rows: [], bytes: [], total: 0, firstPosition: 0, older: nil, newer: nil) : .some(nil)
        }
        let (bytes, spans) = readRows(of: places)
        // The page keeps the bytes read: its rows are served from where they lie.
        var builder = PreparedPageBuilder(tag: tag, epoch: epoch, capacity: size, holding: bytes)
        let whole = bytes.withUnsafeBytes { bytes -> Bool in
            for (place, span) in zip(places, spans) {
                guard let found = span.flatMap({ RowLog.record(in: UnsafeRawBufferPointer(rebasing: bytes[$0]), id: place.id) }) else { return false }
                let row = builder.check(found.prepared)
                guard row.isCurrent else { return false }
                builder.add(
                    id: place.id, published: place.published, seq: place.seq, preview: place.preview, hasPicture: found.hasPicture, row: row,
                    within: bytes)
            }
            return true
        }
        guard whole else { return nil }
        return .some(builder.page(total: Int(found.count)))
    }

    /// Runs of `placed` (places in file order, by their index in `places`),
    /// each read with one `pread`: records less than 4 KiB apart share one.
    static func runs(of placed: [(index: Int, at: Int64)], in places: [Place]) -> [(first: Int, start: Int64, end: Int64)] {
        var runs: [(first: Int, start: Int64, end: Int64)] = []
        runs.reserveCapacity(4)
        for (position, member) in placed.enumerated() {
            let end = member.at + Int64(places[member.index].size)
            if let last = runs.indices.last, member.at <= runs[last].end + 4096 {
                runs[last].end = max(runs[last].end, end)
            } else {
                runs.append((position, member.at, end))
            }
        }
        return runs
    }

    /// How many reads of the row file a page of `size` rows takes: the
    /// median of `samples` pages spread evenly over the feed. 1 when rows lie
    /// in page order, up to `size` when each lies apart (a river's rows,
    /// prepared as its sources' polls wrote them). The median, not the mean:
    /// it says how most pages lie, and new rows scattered over the newest
    /// pages move it only once they are half the feed. nil when the index
    /// cannot answer now, or the feed has no full page.
    public func readsPerPage(size: Int, samples: Int) -> Double? {
        guard let count = header()?.count, count >= Int64(size), samples > 0 else { return nil }
        let pages = Int(count) / size
        var reads: [Int] = []
        for sample in 0..<min(samples, pages) {
            let number = 1 + sample * pages / min(samples, pages)
            guard
                let found = places({ count in
                    let top = count - Int64(number - 1) * Int64(size)
                    return top >= Int64(size) ? (top - Int64(size) + 1)...top : nil
                })
            else { return nil }
            guard !found.places.isEmpty else { continue }
            let placed = found.places.indices.compactMap { index in found.places[index].at.map { (index: index, at: $0) } }.sorted { $0.at < $1.at }
            reads.append(Self.runs(of: placed, in: found.places).count)
        }
        guard !reads.isEmpty else { return nil }
        reads.sort()
        let middle = reads.count / 2
        return reads.count % 2 == 1 ? Double(reads[middle]) : Double(reads[middle - 1] + reads[middle]) / 2
    }

    /// The records of `places` read from the row file, with where each one
    /// sits in the bytes (nil for a row with no place, or one the file does
    /// not hold whole). Records lying close together are read with one `pread`
    /// (rows prepared together are side by side, so a page is usually one
    /// read; a row prepared again since sits apart, read on its own).
    public func readRows(of places: [Place]) -> (bytes: [UInt8], spans: [Range<Int>?]) {
        // Built at its full size at once: `compactMap` grows its array by doubling, five allocations for a page of 30.
        var placed: [(index: Int, at: Int64)] = []
        placed.reserveCapacity(places.count)
        for (index, place) in places.enumerated() { if let at = place.at { placed.append((index, at)) } }
        // Rows prepared together lie in the file newest first, as a page lists them: reversed, in place, rather than sorted.
        if !placed.indices.dropFirst().allSatisfy({ placed[$0 - 1].at <= placed[$0].at }) {
            placed.reverse()
            if !placed.indices.dropFirst().allSatisfy({ placed[$0 - 1].at <= placed[$0].at }) { placed.sort { $0.at < $1.at } }
        }
        let runs = Self.runs(of: placed, in: places)
        let wanted = runs.reduce(0) { $0 + Int($1.end - $1.start) }
        var spans = [Range<Int>?](repeating: nil, count: places.count)
        let bytes = [UInt8](unsafeUninitializedCapacity: wanted) { buffer, initialized in
            var next = 0
            for (number, run) in runs.enumerated() {
                let length = Int(run.end - run.start)
                let count = rows.read(at: run.start, into: UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[next..<(next + length)])))
                // Bytes past the file's end: zeros, which no span reaches.
                if count < length { _ = buffer[(next + count)..<(next + length)].initialize(from: repeatElement(0, count: length - count)) }
                let members = run.first..<(number + 1 < runs.count ? runs[number + 1].first : placed.count)
                for member in placed[members] {
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
}
