import Foundation

/// An entry whose end tag has not been read yet.
struct OpenEntry {
    /// The most image candidates kept for one entry; a hostile feed could
    /// name millions.
    static let imageLimit = 64

    /// The depth of the entry element (the root is 1).
    let depth: Int
    private(set) var fields: RawEntry
    /// An XML error happened inside it: it is not delivered.
    var isCut = false
    /// A field outgrew `XMLFeedParser.fieldLimit`: it is not delivered.
    var isOversized = false
    /// An RSS `guid` that is a permalink, the link when there is no `link`.
    private var permalink: String?

    init(depth: Int, line: Int, id: String?, baseURL: String?) {
        self.depth = depth
        fields = RawEntry(line: line, id: id, baseURL: baseURL)
    }

    var line: Int { fields.line }

    /// Keeps `text` for `target`; the first value of each field wins.
    mutating func set(_ target: FieldCapture.Target, to text: String) {
        switch target {
        case .id: fields.id = fields.id ?? text
        case .title: fields.title = fields.title ?? text
        case .summary: fields.summary = fields.summary ?? text
        case .content: fields.contentHTML = fields.contentHTML ?? text
        case .link: setLink(text)
        case .published: fields.published = fields.published ?? text
        case .updated: fields.updated = fields.updated ?? text
        case .guid(let isPermaLink):
            fields.id = fields.id ?? text
            if isPermaLink && (text.hasPrefix("http://") || text.hasPrefix("https://")) {
                permalink = permalink ?? text
            }
        case .feedTitle, .feedLink, .feedTTL, .skipHour, .skipDay: break
        }
    }

    mutating func setLink(_ link: String) {
        fields.link = fields.link ?? link
    }

    mutating func add(_ image: ImageCandidate) {
        guard fields.images.count < Self.imageLimit else { return }
        fields.images.append(image)
    }

    /// The entry as delivered: `feedLink` is the base when no `xml:base` applied.
    func finished(feedLink: String?) -> RawEntry {
        var entry = fields
        entry.link = entry.link ?? permalink
        entry.baseURL = entry.baseURL ?? feedLink
        return entry
    }
}
