/// One source a list names: where to read it and what the list calls it.
///
/// Only what the list says: whether the source answers, and what its own
/// title and site are, is the poller's to find out.
public struct ListedSource: Sendable, Equatable {
    /// Where the source is read from: an absolute `http` or `https` URL, or
    /// the absolute path of a file or folder on this machine (only a list
    /// read from a file can name one).
    public var location: String
    /// What the list calls the source (OPML `title`, else `text`), as plain
    /// text; nil when the list gives no name.
    public var title: String?
    /// The source's site as the list gives it (OPML `htmlUrl`), only when it
    /// is an http(s) URL: a row may link to it until the feed names its own.
    public var site: String?
    /// The list's line that names the source (1-based), for the operator.
    public var line: Int?

    /// A source at `location`.
    public init(location: String, title: String? = nil, site: String? = nil, line: Int? = nil) {
        self.location = location
        self.title = title
        self.site = site
        self.line = line
    }

    /// Whether `location` is a path on this machine rather than a URL.
    public var isFile: Bool { location.hasPrefix("/") }
}
