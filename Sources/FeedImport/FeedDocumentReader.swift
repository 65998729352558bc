import Foundation
import XMLStream

/// Reads an RSS, RDF or Atom document from `XMLStreamParser` events: tells
/// the format from the root element, keeps the feed's title and link, and
/// hands over each entry when its end tag is read, unless an XML error fell
/// inside it or one of its fields outgrew the limit.
final class FeedDocumentReader: XMLStreamHandler {
    /// The most problems reported for one source; a broken feed can have an
    /// error on every line.
    static let problemLimit = 100

    private let deliver: (RawEntry) throws -> Void
    private let report: (ImportProblem) -> Void

    private(set) var format: FeedFormat?
    private(set) var title: String?
    private(set) var link: String?
    /// The channel's `ttl`, `skipHours` and `skipDays`, those in range.
    private(set) var hints = FeedHints()
    /// Why the document is not a feed (its root element), when it is not.
    private(set) var failure: ImportError?
    /// What `deliver` threw: the import is aborted.
    private(set) var abort: (any Error)?
    /// The first XML error, kept for the failure when no root was read.
    private(set) var firstError: XMLStreamError?

    /// Open elements; the root is at depth 1.
    private var depth = 0
    /// The `xml:base` in effect from each depth down, resolved.
    private var bases: [(depth: Int, url: String)] = []
    /// The depth of the RSS or RDF `channel`, or of the Atom `feed`.
    private var channelDepth: Int?
    /// The channel's `skipHours` or `skipDays` being read, and its depth.
    private var skipList: (name: String, depth: Int)?
    private var entry: OpenEntry?
    private var capture: FieldCapture?
    /// Problems found before the root was read, reported once it is a feed.
    private var heldProblems: [ImportProblem] = []
    private var problemCount = 0
    private var namespaceMessages: Set<String> = []

    init(deliver: @escaping (RawEntry) throws -> Void, report: @escaping (ImportProblem) -> Void) {
        self.deliver = deliver
        self.report = report
    }

    var wantsToStop: Bool { abort != nil || failure != nil }

    func startElement(_ element: XMLStartElement) {
        depth += 1
        if depth == 1 {
            recognizeRoot(element)
            return
        }
        if let base = element.attribute("base", in: XMLName.xmlNamespace) {
            bases.append((depth, Self.resolve(base, against: bases.last?.url)))
        }
        guard let format else { return }
        // A new entry inside one an error cut is how libxml2's recovery
        // nests what follows a missing end tag: start afresh.
        if isEntry(element, format: format) && (entry == nil && capture == nil || entry?.isCut == true) {
            capture = nil
            let id = format == .rdf ? RSSItemReader.id(of: element) : nil
            entry = OpenEntry(depth: depth, line: element.line, id: id, baseURL: bases.last?.url)
            return
        }
        if capture != nil {
            capture?.start(element)
        } else if entry != nil {
            startInEntry(element, format: format)
        } else {
            startInFeed(element, format: format)
        }
    }

    func endElement(_ name: XMLName, line: Int) {
        defer {
            if bases.last?.depth == depth { bases.removeLast() }
            if skipList?.depth == depth { skipList = nil }
            depth -= 1
        }
        if let field = capture {
            if field.depth == depth {
                capture = nil
                finish(field)
            } else {
                capture?.end(name)
            }
        } else if let open = entry, open.depth == depth {
            entry = nil
            finish(open)
        }
    }

    func text(_ utf8: UnsafeRawBufferPointer) {
        capture?.text(utf8)
    }

    func problem(_ error: XMLStreamError) {
        switch error.severity {
        case .warning:
            return
        case .repaired:
            emit(ImportProblem(line: error.line, reason: error.message))
        case .error where error.isNamespaceError:
            // Elements still arrive, prefix and all; say it once per kind.
            if namespaceMessages.count < Self.problemLimit && namespaceMessages.insert(error.message).inserted {
                emit(ImportProblem(line: error.line, reason: error.message))
            }
        case .error, .fatal:
            if format == nil && firstError == nil { firstError = error }
            var reason = error.message
            if let open = entry, !open.isCut {
                entry?.isCut = true
                reason += "; the entry at line \(open.line) is skipped"
            }
            emit(ImportProblem(line: error.line, reason: reason))
        }
    }

    private func recognizeRoot(_ element: XMLStartElement) {
        let name = element.name
        if name.localName.lowercased() == "html" || name.namespaceURI == FeedNamespace.xhtml {
            failure = ImportError("an HTML page, not a feed")
        } else if name.is("rss", in: nil) {
            format = .rss
        } else if name.is("RDF", in: FeedNamespace.rdf) {
            format = .rdf
            channelDepth = nil
        } else if name.is("feed", in: FeedNamespace.atom) {
            format = .atom
            channelDepth = 1
        } else {
            let namespace = name.namespaceURI.map { " (namespace \($0))" } ?? ""
            failure = ImportError("not a feed: the root element is <\(name.qualifiedName)>\(namespace)", line: element.line)
        }
        if let base = element.attribute("base", in: XMLName.xmlNamespace) { bases.append((1, base)) }
        guard format != nil else { return }
        let held = heldProblems
        heldProblems = []
        problemCount = 0
        held.forEach(emit)
    }

    private func isEntry(_ element: XMLStartElement, format: FeedFormat) -> Bool {
        format == .atom ? AtomEntryReader.isEntry(element) : RSSItemReader.isItem(element, format: format)
    }

    private func startInEntry(_ element: XMLStartElement, format: FeedFormat) {
        if let image = ModuleElements.mediaImage(element) {
            entry?.add(image)
            return
        }
        guard var open = entry, depth == open.depth + 1 else { return }
        entry = nil  // so that `open` is the only copy while it changes
        capture =
            format == .atom
            ? AtomEntryReader.childStarted(element, entry: &open, depth: depth)
            : RSSItemReader.childStarted(element, format: format, entry: &open, depth: depth)
        entry = open
    }

    private func startInFeed(_ element: XMLStartElement, format: FeedFormat) {
        if format != .atom && depth == 2 && RSSItemReader.isOwn(element.name, "channel", format: format) {
            channelDepth = 2
            return
        }
        if let list = skipList {
            if depth == list.depth + 1 { capture = RSSItemReader.skipChildStarted(element, in: list.name, depth: depth) }
            return
        }
        guard let channelDepth, depth == channelDepth + 1 else { return }
        if RSSItemReader.isSkipList(element, format: format) {
            skipList = (element.name.localName, depth)
            return
        }
        capture =
            format == .atom
            ? AtomEntryReader.feedChildStarted(element, depth: depth) { link = link ?? $0 }
            : RSSItemReader.channelChildStarted(element, format: format, depth: depth)
    }

    private func finish(_ field: FieldCapture) {
        if field.buffer.isOverLimit {
            if entry != nil {
                entry?.isOversized = true
            } else {
                emit(ImportProblem(line: field.line, reason: "a field larger than 4 MiB"))
            }
            return
        }
        guard let text = field.value else { return }
        switch field.target {
        case .feedTitle: title = title ?? text
        case .feedLink: link = link ?? text
        case .feedTTL: hints.ttlMinutes = hints.ttlMinutes ?? FeedHints.ttl(text)
        case .skipHour: if let hour = FeedHints.hour(text) { hints.skipHours.insert(hour) }
        case .skipDay: if let day = FeedHints.day(text) { hints.skipDays.insert(day) }
        default: entry?.set(field.target, to: text)
        }
    }

    private func finish(_ open: OpenEntry) {
        guard !open.isCut else { return }
        if open.isOversized {
            emit(ImportProblem(line: open.line, reason: "a field larger than 4 MiB"))
            return
        }
        do {
            try deliver(open.finished(feedLink: link))
        } catch {
            abort = error
        }
    }

    private func emit(_ problem: ImportProblem) {
        guard format != nil else {
            if heldProblems.count < Self.problemLimit { heldProblems.append(problem) }
            return
        }
        problemCount += 1
        if problemCount <= Self.problemLimit {
            report(problem)
        } else if problemCount == Self.problemLimit + 1 {
            report(ImportProblem(line: problem.line, reason: "more than \(Self.problemLimit) problems; the rest are not reported"))
        }
    }

    /// `base` resolved against the `xml:base` around it, when it is relative.
    static func resolve(_ base: String, against outer: String?) -> String {
        guard let outer, let outerURL = URL(string: outer) else { return base }
        return URL(string: base, relativeTo: outerURL)?.absoluteString ?? base
    }
}
