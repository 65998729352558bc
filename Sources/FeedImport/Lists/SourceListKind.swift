import XMLStream

/// What a document given as a source turned out to be, told from its first
/// bytes: a list of sources (OPML, or one address a line), or a feed.
public enum SourceListKind: String, Sendable, Equatable, Hashable {
    /// An OPML document: its `outline`s name the sources.
    case opml
    /// UTF-8 text naming one source a line.
    case plainList = "plain list"
    /// A feed (RSS, Atom, JSON Feed, or any other XML or JSON object): a
    /// source of its own, for the feed readers to judge.
    case feed

    /// How many bytes of a document `sniff` looks at.
    public static let sniffLength = 4096

    /// The kind of the document that starts with `head` (at most its first
    /// `sniffLength` bytes are looked at), or nil when it is none of them.
    ///
    /// A byte order mark and white space are skipped; XML whose root element
    /// is `opml` is `.opml`; other XML (or HTML) and a JSON object are
    /// `.feed`; text whose every line that is neither blank nor a `#`
    /// comment looks like a URL (http, https, `feed:`, `file:`) or a path is
    /// `.plainList`; anything else, and a blank document, is nil.
    public static func sniff(_ head: some Collection<UInt8>) -> SourceListKind? {
        let head = Array(head.prefix(sniffLength))
        // UTF-16 and UTF-32, with a byte order mark or without: only XML declares them.
        let wideStarts: [[UInt8]] = [[0xFE, 0xFF], [0xFF, 0xFE], [0x00, 0x00, 0xFE, 0xFF], [0x00, 0x3C], [0x00, 0x00, 0x00, 0x3C]]
        if wideStarts.contains(where: { head.starts(with: $0) }) { return rootIsOPML(head) ? .opml : .feed }
        var text = head[...]
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }
        guard let first = text.first(where: { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) }) else { return nil }
        switch first {
        case UInt8(ascii: "<"): return rootIsOPML(head) ? .opml : .feed
        case UInt8(ascii: "{"): return .feed
        default: return PlainListReader.looksLikeList(text, isCut: head.count == sniffLength) ? .plainList : nil
        }
    }

    /// The kind of `input`, from its first `sniffLength` bytes.
    public static func sniff(_ input: FeedInput) throws(ImportError) -> SourceListKind? {
        sniff(try SourceList.head(of: input))
    }

    /// Whether the first element of the XML document starting with `head` is
    /// `opml`, as `XMLStreamParser` reads it (encodings, comments, a DOCTYPE).
    private static func rootIsOPML(_ head: [UInt8]) -> Bool {
        let finder = RootFinder()
        let parser = XMLStreamParser(handler: finder)
        head.withUnsafeBytes { parser.feed($0) }
        parser.finish()
        return finder.root.map(OPMLReader.isRoot) ?? false
    }
}

/// Notes the first element's name and stops.
private final class RootFinder: XMLStreamHandler {
    var root: XMLName?

    var wantsToStop: Bool { root != nil }

    func startElement(_ element: XMLStartElement) {
        if root == nil { root = element.name }
    }

    func endElement(_ name: XMLName, line: Int) {}
    func text(_ utf8: UnsafeRawBufferPointer) {}
    func problem(_ error: XMLStreamError) {}
}
