import Foundation
import XMLStream

/// Atom 1.0 `entry`s: which elements they are and what their children mean.
enum AtomEntryReader {
    /// Whether `element` starts an entry.
    static func isEntry(_ element: XMLStartElement) -> Bool {
        element.name.is("entry", in: FeedNamespace.atom)
    }

    /// A child of an entry starts: the field to read its text into, if any;
    /// a `link` is taken from its attributes right away.
    static func childStarted(_ element: XMLStartElement, entry: inout OpenEntry, depth: Int) -> FieldCapture? {
        guard element.name.namespaceURI == FeedNamespace.atom else {
            return ModuleElements.childStarted(element, entry: &entry, depth: depth)
        }
        let type = element.attribute("type")?.lowercased()
        let textMode: FieldCapture.Mode = type == "xhtml" ? .xhtml : .text
        switch element.name.localName {
        case "id": return FieldCapture(.id, depth: depth, line: element.line)
        case "title": return FieldCapture(.title, mode: textMode, depth: depth, line: element.line)
        case "summary": return FieldCapture(.summary, mode: textMode, depth: depth, line: element.line)
        case "published": return FieldCapture(.published, depth: depth, line: element.line)
        case "updated": return FieldCapture(.updated, depth: depth, line: element.line)
        case "content":
            guard element.attribute("src") == nil, let mode = contentMode(type) else { return nil }
            return FieldCapture(.content, mode: mode, depth: depth, line: element.line)
        case "link":
            guard let href = element.attribute("href") else { return nil }
            switch relation(element) {
            case "alternate": entry.setLink(href)
            case "enclosure": entry.add(ImageCandidate(kind: .enclosure, url: href, mimeType: element.attribute("type")))
            default: break
            }
            return nil
        default: return nil
        }
    }

    /// A child of the feed element starts: the feed's `title` to read, or
    /// its alternate `link` (handed to `setLink`).
    static func feedChildStarted(_ element: XMLStartElement, depth: Int, setLink: (String) -> Void) -> FieldCapture? {
        guard element.name.namespaceURI == FeedNamespace.atom else { return nil }
        switch element.name.localName {
        case "title":
            let mode: FieldCapture.Mode = element.attribute("type")?.lowercased() == "xhtml" ? .xhtml : .text
            return FieldCapture(.feedTitle, mode: mode, depth: depth, line: element.line)
        case "link":
            if relation(element) == "alternate", let href = element.attribute("href") { setLink(href) }
            return nil
        default: return nil
        }
    }

    /// A link's `rel`: "alternate" when absent; IANA's full URIs shortened.
    private static func relation(_ element: XMLStartElement) -> String {
        let rel = element.attribute("rel")?.trimmingFeedSpace().lowercased() ?? "alternate"
        let iana = "http://www.iana.org/assignments/relation/"
        return rel.hasPrefix(iana) ? String(rel.dropFirst(iana.count)) : rel
    }

    /// How `content` of `type` becomes HTML: `html` is HTML already, `xhtml`
    /// is reserialized, text (the default) is escaped; other media types
    /// (base64 images, XML) are not content to show.
    private static func contentMode(_ type: String?) -> FieldCapture.Mode? {
        switch type {
        case nil, "text", "text/plain": return .escaped
        case "html", "text/html": return .text
        case "xhtml", "application/xhtml+xml": return .xhtml
        default: return nil
        }
    }
}
