/// The kinds of source Warmfeed imports.
public enum FeedFormat: String, Sendable, Equatable {
    /// JSON Feed 1.0 or 1.1.
    case jsonFeed = "JSON Feed"
    /// RSS 0.91 to 2.0 (with Media RSS and enclosures).
    case rss = "RSS"
    /// RSS 1.0 (RDF).
    case rdf = "RSS 1.0 (RDF)"
    /// Atom 1.0.
    case atom = "Atom"
    /// A folder of images.
    case imageFolder = "image folder"
}

/// What a parser learned about the source as a whole.
public struct FeedMetadata: Sendable, Equatable {
    /// Which format it was.
    public var format: FeedFormat
    /// The feed's title, when it has one.
    public var title: String?
    /// The feed's home page (RSS channel `link`, Atom `link rel=alternate`, JSON Feed `home_page_url`).
    public var link: String?
    /// How often the feed says it is worth reading (RSS `ttl`, `skipHours`,
    /// `skipDays`); empty for the formats that cannot say.
    public var hints: FeedHints

    /// Metadata of a source in `format`.
    public init(format: FeedFormat, title: String? = nil, link: String? = nil, hints: FeedHints = FeedHints()) {
        self.format = format
        self.title = title
        self.link = link
        self.hints = hints
    }
}
