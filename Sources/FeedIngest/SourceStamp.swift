/// Which source an import's items belong to, and how their rows name it.
public struct SourceStamp: Sendable, Equatable {
    /// The store's id of the source (`FeedItem.source`).
    public var id: Int64
    /// The title and site its rows show now (what the last import found).
    public var title: String?
    public var site: String?
    /// The title and site the source list gives, shown while the feed names none.
    public var listedTitle: String?
    public var listedSite: String?

    /// Makes a stamp.
    public init(id: Int64, title: String? = nil, site: String? = nil, listedTitle: String? = nil, listedSite: String? = nil) {
        (self.id, self.title, self.site) = (id, title, site)
        (self.listedTitle, self.listedSite) = (listedTitle, listedSite)
    }
}
