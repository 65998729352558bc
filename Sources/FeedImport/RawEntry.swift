import Foundation

/// One entry as a source gave it, before it is checked and cleaned: the
/// parsers of each format only pick fields out, `EntryBuilder` decides what
/// they mean (which image wins, how text is made inert, which date applies).
public struct RawEntry: Sendable, Equatable {
    /// The line of the source where the entry starts (1-based; 0 when unknown).
    public var line: Int
    /// The source's own identifier: RSS `guid`, Atom `id`, RDF `rdf:about`, JSON Feed `id`.
    public var id: String?
    /// The title as found (entities decoded; may still hold markup).
    public var title: String?
    /// A summary: RSS `description`, Atom `summary`, JSON Feed `summary`/`content_text`.
    public var summary: String?
    /// The full content as HTML: `content:encoded`, Atom `content`, JSON Feed `content_html`.
    /// Only read for the first `<img>` and, when there is no summary, for text.
    public var contentHTML: String?
    /// The entry's link as found (may be relative).
    public var link: String?
    /// The base relative URLs of this entry resolve against (`xml:base` in
    /// effect, the feed's link), when the source says one; the source's own URL
    /// is the fallback.
    public var baseURL: String?
    /// Image candidates in the order found; `EntryBuilder` ranks them by kind.
    public var images: [ImageCandidate]
    /// The publication date as written (RFC 822, RFC 3339, or whatever the source used).
    public var published: String?
    /// The update date as written, used when there is no publication date.
    public var updated: String?
    /// A date already known as a date (an image's EXIF time, a file's mtime).
    public var publishedDate: Date?

    /// An entry with nothing in it yet, starting at `line`.
    public init(
        line: Int = 0, id: String? = nil, title: String? = nil, summary: String? = nil, contentHTML: String? = nil,
        link: String? = nil, baseURL: String? = nil, images: [ImageCandidate] = [], published: String? = nil,
        updated: String? = nil, publishedDate: Date? = nil
    ) {
        self.line = line
        self.id = id
        self.title = title
        self.summary = summary
        self.contentHTML = contentHTML
        self.link = link
        self.baseURL = baseURL
        self.images = images
        self.published = published
        self.updated = updated
        self.publishedDate = publishedDate
    }
}

/// An image an entry names, with where it came from.
public struct ImageCandidate: Sendable, Equatable {
    /// Where in the entry the image was named; earlier kinds win.
    public enum Kind: Int, Sendable, Comparable {
        /// The format's own image field: JSON Feed `image`/`banner_image`, an
        /// item-level `itunes:image`, a folder's file.
        case own = 0
        /// Media RSS: `media:content` (an image), `media:thumbnail`, inside `media:group` or not.
        case media = 1
        /// An `enclosure` (RSS) or `link rel="enclosure"` (Atom) or attachment
        /// (JSON Feed) whose type is an image.
        case enclosure = 2

        public static func < (a: Kind, b: Kind) -> Bool { a.rawValue < b.rawValue }
    }

    /// Where it came from.
    public var kind: Kind
    /// The URL as found (may be relative).
    public var url: String
    /// Its width in pixels, when the source says.
    public var width: Int?
    /// Its height in pixels, when the source says.
    public var height: Int?
    /// Its MIME type, when the source says (`image/jpeg`); a candidate whose
    /// type is known and not an image is ignored.
    public var mimeType: String?

    /// A candidate.
    public init(kind: Kind, url: String, width: Int? = nil, height: Int? = nil, mimeType: String? = nil) {
        self.kind = kind
        self.url = url
        self.width = width
        self.height = height
        self.mimeType = mimeType
    }
}
