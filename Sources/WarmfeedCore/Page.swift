/// Which page a reader asks for.
public enum PageRequest: Sendable, Hashable, BitwiseCopyable {
    /// The N-th page from the top, counted now (a deep link, `/?page=N`).
    case number(Int)
    /// The page of items just older than the cursor (following a sentinel).
    case after(Cursor)
    /// The page of items just newer than the cursor (a "newer items" link).
    case before(Cursor)
}

/// One page of the feed, newest item first.
public struct Page: Sendable {
    /// The items, newest first.
    public var items: [FeedItem]
    /// How many items the whole feed holds (the rows' `aria-setsize`).
    public var total: Int
    /// The 1-based position of the first item from the top (its `aria-posinset`).
    public var firstPosition: Int
    /// Where the next (older) page starts; nil when this page reaches the end.
    public var older: Cursor?
    /// Where the previous (newer) page ends; nil when this page starts at the top.
    public var newer: Cursor?

    /// Makes a page.
    public init(items: [FeedItem], total: Int, firstPosition: Int, older: Cursor?, newer: Cursor?) {
        self.items = items
        self.total = total
        self.firstPosition = firstPosition
        self.older = older
        self.newer = newer
    }
}

extension Page {
    /// The page of `items` (newest first, each with its rank) in a feed of
    /// `total` items, linked to its neighbours by `cursor`: how every backend
    /// turns the rows it read into a page. Nil when there are no items.
    public init?(ranked items: [FeedItem], total: Int, cursor: (FeedItem) -> Cursor) {
        guard let first = items.first, let last = items.last else { return nil }
        let firstSeq = first.seq ?? Int64(total)
        self.init(
            items: items,
            total: total,
            firstPosition: total - Int(firstSeq) + 1,
            older: (last.seq ?? 1) > 1 ? cursor(last) : nil,
            newer: firstSeq < Int64(total) ? cursor(first) : nil
        )
    }
}
