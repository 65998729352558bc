import Foundation

/// An entry checked and cleaned, ready for the store: plain text, absolute
/// URLs of allowed schemes, a stable key.
public struct ImportedEntry: Sendable, Equatable {
    /// The stable key: the source's id, else its link, else a digest of its content.
    public var guid: String
    /// The title, plain text, at most `EntryBuilder.titleLimit` characters.
    public var title: String
    /// The summary, plain text, at most `EntryBuilder.summaryLimit` characters.
    public var summary: String
    /// The entry's link, absolute http(s).
    public var link: String?
    /// The image's URL, absolute http(s) (or file, for a folder import).
    public var imageURL: String?
    /// The image's width, when the source said.
    public var imageWidth: Int?
    /// The image's height, when the source said.
    public var imageHeight: Int?
    /// When it was published; nil when the source gave no usable date (the
    /// importer then keeps the stored date, or picks one that keeps the source's order).
    public var published: Date?
    /// The source line it started on (0 when unknown).
    public var line: Int

    /// An entry.
    public init(
        guid: String, title: String, summary: String, link: String? = nil, imageURL: String? = nil,
        imageWidth: Int? = nil, imageHeight: Int? = nil, published: Date? = nil, line: Int = 0
    ) {
        self.guid = guid
        self.title = title
        self.summary = summary
        self.link = link
        self.imageURL = imageURL
        self.imageWidth = imageWidth
        self.imageHeight = imageHeight
        self.published = published
        self.line = line
    }
}
