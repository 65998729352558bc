import FeedImport

/// A feed a source list names (or a `--source` that is a feed itself): what
/// the poller polls, keyed by where it is.
public struct ListedFeed: Sendable, Equatable {
    /// Where it is: an http(s) URL, or an absolute path to a file or a folder.
    public var source: ImportSource
    /// The title and site the list gives it (an OPML outline's), shown while
    /// the feed names none of its own.
    public var title: String?
    public var site: String?
    /// The `--source` value that names it.
    public var listedBy: String

    /// Makes a listed feed.
    public init(source: ImportSource, title: String? = nil, site: String? = nil, listedBy: String) {
        (self.source, self.title, self.site, self.listedBy) = (source, title, site, listedBy)
    }

    /// The key the store keeps it under: its URL or path.
    public var key: String { source.description }

    /// The host it is polled under: politeness (`Retry-After`, the limit per
    /// host) is per `host:port`; each file or folder is a host of its own.
    public var host: String { SourceURL.host(of: source) }
}
