import XMLStream

/// Reads an OPML list (1.0, 1.1 and 2.0 alike) from `XMLStreamParser`
/// events: each `outline` under `body` that has an `xmlUrl` is a source,
/// whatever its `type`; folders are flattened in document order.
///
/// The rules are the OPML 2.0 spec's, read as listparser reads real files:
/// attribute names in any case, a comment outline (`isComment="true"`)
/// skipped with everything inside it, an include (`type="include"`) named
/// as a problem and not followed. Any XML error ends the read: a list read
/// only in part would look like a list whose later sources were taken out.
final class OPMLReader: XMLStreamHandler {
    /// The deepest folder nesting read; an outline below it is skipped, with
    /// a problem, together with the outlines inside it.
    static let depthLimit = 32

    private(set) var builder: SourceListBuilder
    /// Whether the root element was `opml`.
    private(set) var sawRoot = false
    /// Why the list cannot be used, once it cannot.
    private(set) var failure: ImportError?

    /// Open elements; the root is at depth 1.
    private var depth = 0
    /// The depth of `body`, while it is open.
    private var bodyDepth: Int?
    /// The depth of an outline whose whole subtree is skipped, while it is open.
    private var skippedDepth: Int?

    init(builder: SourceListBuilder) {
        self.builder = builder
    }

    /// Reads the OPML list `input` whole: its sources and problems, or the
    /// error that made it unusable (not well-formed, no `opml` root, too
    /// large), in which case nothing of it is returned.
    static func read(_ input: FeedInput, into builder: SourceListBuilder) throws(ImportError) -> SourceListBuilder {
        let reader = OPMLReader(builder: builder)
        let parser = XMLStreamParser(handler: reader)
        try SourceList.forEachChunk(of: input) { chunk in
            parser.feed(chunk)
            return !parser.isStopped
        }
        parser.finish()
        if let failure = reader.failure { throw failure }
        guard reader.sawRoot else { throw ImportError("not an OPML list: no root element") }
        return reader.builder
    }

    var wantsToStop: Bool { failure != nil || builder.isFull }

    /// Whether `name` is OPML's root element.
    static func isRoot(_ name: XMLName) -> Bool {
        name.localName.lowercased() == "opml"
    }

    func startElement(_ element: XMLStartElement) {
        depth += 1
        if depth == 1 {
            if Self.isRoot(element.name) {
                sawRoot = true
            } else {
                failure = ImportError("not an OPML list: the root element is <\(element.name.qualifiedName)>", line: element.line)
            }
            return
        }
        guard skippedDepth == nil else { return }
        let name = element.name.localName.lowercased()
        guard let bodyDepth else {
            if depth == 2 && name == "body" { bodyDepth = depth }
            return
        }
        guard name == "outline" else { return }
        let outline = Outline(element)
        if outline["isComment"]?.lowercased() == "true" {
            skippedDepth = depth
        } else if depth - bodyDepth > Self.depthLimit {
            skippedDepth = depth
            builder.report(
                ImportProblem(line: element.line, reason: "an outline nested more than \(Self.depthLimit) deep: it and the outlines inside it are left out"))
        } else if let address = outline["xmlUrl"] {
            let title = SourceListBuilder.plainTitle(outline["title"]) ?? SourceListBuilder.plainTitle(outline["text"])
            builder.add(address, title: title, site: outline["htmlUrl"], line: element.line)
        } else if outline["type"]?.lowercased() == "include" {
            let url = outline["url"].map { " (\(SourceLocation.shown($0)))" } ?? ""
            builder.report(ImportProblem(line: element.line, reason: "an included list is not followed\(url): name it as a list of its own"))
        }
    }

    func endElement(_ name: XMLName, line: Int) {
        if skippedDepth == depth { skippedDepth = nil }
        if bodyDepth == depth { bodyDepth = nil }
        depth -= 1
    }

    func text(_ utf8: UnsafeRawBufferPointer) {}

    func problem(_ error: XMLStreamError) {
        switch error.severity {
        case .warning:
            return
        case .repaired:
            builder.report(ImportProblem(line: error.line, reason: error.message))
        case .error where error.isNamespaceError:
            return  // OPML has no namespace of its own; an undeclared prefix loses nothing read here.
        case .error, .fatal:
            if failure == nil { failure = ImportError("the OPML list is not used: \(error.message)", line: error.line) }
        }
    }
}

/// An outline's attributes by name, in any capitalisation (`xmlUrl`,
/// `xmlurl`, `XMLURL` are all met in the wild), the first of a repeated one.
private struct Outline {
    let element: XMLStartElement

    init(_ element: XMLStartElement) {
        self.element = element
    }

    /// The value of the attribute `name` (no namespace), when the outline has it.
    subscript(name: String) -> String? {
        let wanted = name.lowercased()
        return element.attributes.first { $0.name.namespaceURI == nil && $0.name.localName.lowercased() == wanted }?.value
    }
}
