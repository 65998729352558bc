/// The fields of one JSON Feed item picked out into a `RawEntry`
/// (https://www.jsonfeed.org/version/1.1/).
///
/// A field read with the wrong type skips the item: a feed whose `title` is a
/// number is broken in a way that guessing would hide. Fields not read here
/// (`tags`, `author`, `authors`, extensions) may hold anything.
enum JSONFeedItem {
    /// Why an item was skipped: its `field` (nil: the item itself) is of the wrong type.
    struct Mismatch: Error, Equatable {
        var field: String?
        var found: String
        var expected: String

        /// The reason given for item `index`: "item 12: \"title\" is a number, not a string".
        func reason(item index: Int) -> String {
            guard let field else { return "item \(index) is \(found), not \(expected)" }
            return "item \(index): \"\(field)\" is \(found), not \(expected)"
        }
    }

    /// The entry `value` describes, starting at `line`, with relative URLs
    /// resolving against `baseURL`.
    ///
    /// A number `id` is taken as its decimal text: many feeds write ids as
    /// numbers although the format says string.
    static func entry(_ value: JSONValue, line: Int, baseURL: String?) throws(Mismatch) -> RawEntry {
        guard case .object(let fields) = value else { throw Mismatch(field: nil, found: value.kind, expected: "an object") }
        var entry = RawEntry(line: line, baseURL: baseURL)
        switch fields["id"] {
        case nil, .null?: break
        case .string(let id)?: entry.id = id
        case .number(let id)?: entry.id = id
        case let other?: throw Mismatch(field: "id", found: other.kind, expected: "a string")
        }
        entry.title = try string("title", in: fields)
        entry.summary = try first("summary", else: "content_text", in: fields)
        entry.contentHTML = try string("content_html", in: fields)
        entry.link = try first("url", else: "external_url", in: fields)
        entry.published = try string("date_published", in: fields)
        entry.updated = try string("date_modified", in: fields)
        for name in ["image", "banner_image"] {
            if let url = try string(name, in: fields) { entry.images.append(ImageCandidate(kind: .own, url: url)) }
        }
        entry.images += try attachedImages(fields["attachments"])
        return entry
    }

    /// The attachments whose type is an image, as enclosure candidates.
    private static func attachedImages(_ value: JSONValue?) throws(Mismatch) -> [ImageCandidate] {
        let attachments: [JSONValue]
        switch value {
        case nil, .null?: return []
        case .array(let elements)?: attachments = elements
        case let other?: throw Mismatch(field: "attachments", found: other.kind, expected: "an array")
        }
        var images: [ImageCandidate] = []
        for (offset, attachment) in attachments.enumerated() {
            let name = "attachments[\(offset)]"
            guard case .object(let fields) = attachment else {
                throw Mismatch(field: name, found: attachment.kind, expected: "an object")
            }
            let url = try string("url", in: fields, within: name)
            let type = try string("mime_type", in: fields, within: name)
            if let url, let type, type.lowercased().hasPrefix("image/") {
                images.append(ImageCandidate(kind: .enclosure, url: url, mimeType: type))
            }
        }
        return images
    }

    /// The string member `name`, else the string member `fallback`; both are checked.
    private static func first(
        _ name: String, else fallback: String, in fields: [String: JSONValue]
    ) throws(Mismatch) -> String? {
        let found = try string(name, in: fields)
        let other = try string(fallback, in: fields)
        return found ?? other
    }

    /// The string member `name`; nil when absent or null.
    private static func string(
        _ name: String, in fields: [String: JSONValue], within parent: String? = nil
    ) throws(Mismatch) -> String? {
        switch fields[name] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        case let other?:
            throw Mismatch(field: parent.map { "\($0).\(name)" } ?? name, found: other.kind, expected: "a string")
        }
    }
}
