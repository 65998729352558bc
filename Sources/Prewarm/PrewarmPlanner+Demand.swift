import WarmfeedCore

/// The demand table: for each page some reader wants, how many want it at
/// each rank and in each variant, kept in the page's entry of `pages` as
/// readers move (`moveDemand`), so that a page's distance is one lookup,
/// not a scan of every reader.
extension PrewarmPlanner {
    /// Whether some reader is on `page`, heading for it within their lead, or
    /// just past it (the trailing side).
    /// The page a reader has just reached stays wanted: its thumbnails are being
    /// asked for right now, and a job still warming it must not be cancelled.
    public func isWanted(_ page: Int) -> Bool {
        pages[page].map { !$0.demand.isEmpty } ?? false
    }

    /// The rank of `page` for the reader who wants it most (lower runs
    /// first; see `forEachWantedPage`); Int.max when no reader wants it.
    func distance(_ page: Int) -> Int {
        pages[page]?.demand.nearest ?? Int.max
    }

    /// The pages a reader wants, each with its rank (lower runs first): the
    /// page they are on (0), the lead ahead (1 … lead), then the page behind
    /// (after every page ahead of anyone). Pages a reader will reach before a
    /// job could warm them (at their pace, within one warm-up) rank after the
    /// farther ones: their reader asks for them before pre-warm could help,
    /// and warming them first only delays the pages it can still make ready.
    ///
    /// Handed to `body` one by one, with no array made: this runs for
    /// each view, on pre-warm's drain, for every reader's request.
    static func forEachWantedPage(of reader: Reader, maxLead: Int, _ body: (_ page: Int, _ rank: Int) -> Void) {
        for ahead in 0...reader.lead {
            body(reader.page + ahead * reader.direction, ahead >= 1 && ahead <= reader.reach ? maxLead + ahead : ahead)
        }
        if reader.lead > 0 { body(reader.page - reader.direction, 2 * maxLead + 1) }
    }

    /// The rank `reader` wants `page` at (as `forEachWantedPage` hands it
    /// out), or nil when they do not want it: arithmetic, no lookup.
    static func rank(of page: Int, for reader: Reader, maxLead: Int) -> Int? {
        let ahead = (page - reader.page) * reader.direction
        if ahead >= 0, ahead <= reader.lead { return ahead >= 1 && ahead <= reader.reach ? maxLead + ahead : ahead }
        return reader.lead > 0 && ahead == -1 ? 2 * maxLead + 1 : nil
    }

    /// The variants some reader who wants `page` asks for, a bit each.
    func wantedVariants(_ page: Int) -> UInt8 {
        pages[page]?.demand.variants ?? 0
    }

    /// Moves a reader's counts from where they were (`old`, nil for a new
    /// reader) to where they are: one lookup for a page whose rank or
    /// variants changed, none for a page that kept them (a reader viewing
    /// the page they are on changes nothing). Before, every view took every
    /// page of the old lead out and put every page of the new one back, two
    /// lookups a page, the bulk of pre-warm's CPU under readers' load.
    mutating func moveDemand(from old: Reader?, to new: Reader) {
        if let old {
            Self.forEachWantedPage(of: old, maxLead: maxLead) { page, rank in
                let kept = Self.rank(of: page, for: new, maxLead: maxLead)
                guard kept != rank || old.variants != new.variants, let index = pages.index(forKey: page) else { return }
                pages.values[index].demand.remove(rank: rank, variants: old.variants)
                if let kept { pages.values[index].demand.add(rank: kept, variants: new.variants) }
                if pages.values[index].isIdle { pages.remove(at: index) }
            }
        }
        Self.forEachWantedPage(of: new, maxLead: maxLead) { page, rank in
            if let old, Self.rank(of: page, for: old, maxLead: maxLead) != nil { return }
            pages[page, default: PageState()].demand.add(rank: rank, variants: new.variants)
        }
    }

    /// The demand table as kept: each page some reader wants, and how.
    var demand: [Int: PageDemand] {
        pages.compactMapValues { $0.demand.isEmpty ? nil : $0.demand }
    }

    /// The demand table as counting every reader afresh would make it: what
    /// the tests hold the table kept by `moveDemand` to.
    var rebuiltDemand: [Int: PageDemand] {
        var table: [Int: PageDemand] = [:]
        for reader in readers.values {
            Self.forEachWantedPage(of: reader, maxLead: maxLead) { page, rank in
                table[page, default: PageDemand()].add(rank: rank, variants: reader.variants)
            }
        }
        return table
    }

    /// One lookup of the table a page; a page no reader wants any more leaves it.
    mutating func removeDemand(of reader: Reader) {
        Self.forEachWantedPage(of: reader, maxLead: maxLead) { page, rank in
            guard let index = pages.index(forKey: page) else { return }
            pages.values[index].demand.remove(rank: rank, variants: reader.variants)
            if pages.values[index].isIdle { pages.remove(at: index) }
        }
    }
}
