/// One item of the feed: a row on the page.
public struct FeedItem: Sendable, Hashable, Codable {
    /// The store's id (assigned on insert).
    public var id: Int64?
    /// The source's stable identifier (guid, id or link); unique within its source.
    public var guid: String
    /// The title, plain text.
    public var title: String
    /// The summary, plain text.
    public var summary: String
    /// Where the item points, if anywhere.
    public var link: String?
    /// The original image's URL, if the item has one.
    public var imageURL: String?
    /// The original image's width in pixels, when known.
    public var imageWidth: Int?
    /// The original image's height in pixels, when known.
    public var imageHeight: Int?
    /// When it was published, in milliseconds since 1970.
    public var published: Int64
    /// The item's rank from the oldest (1) to the newest (the item count); kept by the store.
    public var seq: Int64?
    /// Its picture's preview (see ``ThumbnailPreview``), kept by the store once
    /// a thumbnail of it has been made; an import leaves it, unless the image changes.
    public var preview: Int64?
    /// The source it came from (see ``SourceEntry``); 0 for none (the demo
    /// feed, `warmfeed import`, a data folder from before sources): the same
    /// guid in two sources is two items.
    public var source: Int64
    /// The source's title and site as the row shows them, kept with the item
    /// so a row is rendered from its item alone (set by the importer).
    public var sourceTitle: String?
    public var sourceLink: String?

    /// Makes an item (the store assigns `id` and `seq`).
    public init(
        id: Int64? = nil, guid: String, title: String, summary: String, link: String? = nil,
        imageURL: String? = nil, imageWidth: Int? = nil, imageHeight: Int? = nil, published: Int64, seq: Int64? = nil,
        preview: Int64? = nil, source: Int64 = 0, sourceTitle: String? = nil, sourceLink: String? = nil
    ) {
        self.preview = preview
        self.source = source
        self.sourceTitle = sourceTitle
        self.sourceLink = sourceLink
        self.id = id
        self.guid = guid
        self.title = title
        self.summary = summary
        self.link = link
        self.imageURL = imageURL
        self.imageWidth = imageWidth
        self.imageHeight = imageHeight
        self.published = published
        self.seq = seq
    }
}

extension FeedItem {
    /// This item (as a source gives it) written over `stored`, the item with
    /// its source and guid: it keeps the store's id and rank, the preview while the
    /// picture is the same (previews are made from pictures), and with
    /// `keepStoredDate` the stored date (the source gave none, and a guessed
    /// date must not move it on every import). Every backend's writer uses it.
    public func replacing(_ stored: FeedItem, keepStoredDate: Bool) -> FeedItem {
        var item = self
        item.id = stored.id
        item.seq = stored.seq
        item.preview = imageURL == stored.imageURL ? stored.preview : nil
        if keepStoredDate { item.published = stored.published }
        return item
    }
}
