import XMLStream

/// Reads RSS (0.91 to 2.0), RSS 1.0 (RDF) and Atom 1.0 sources into raw
/// entries, streaming: a 200 MB feed is read 64 KiB at a time and each entry
/// is handed over as soon as its end tag is read.
public enum XMLFeedParser {
    /// The most text one field may hold. An entry with a larger field is
    /// skipped with a problem; the text stops being gathered at the limit.
    public static let fieldLimit = 4 << 20

    /// Reads `input`, calling `onEntry` with each entry in document order
    /// and `onProblem` with each problem that did not stop the import (an
    /// XML error, with its line: the entry it fell in is skipped, the entries
    /// before it are already delivered, and the ones libxml2 could read after
    /// it still are).
    ///
    /// Throws `ImportError` when the source is empty, not XML, an HTML page,
    /// or XML whose root element is not a feed's; nothing has been delivered
    /// then. Throws whatever `onEntry` throws, unchanged, and reads no further.
    /// - Returns: the format, the feed's title and link, and its hints.
    public static func parse(
        _ input: FeedInput, onEntry: (RawEntry) throws -> Void, onProblem: (ImportProblem) -> Void
    ) throws -> FeedMetadata {
        // The reader keeps the closures only while this call runs.
        try withoutActuallyEscaping(onEntry) { onEntry in
            try withoutActuallyEscaping(onProblem) { onProblem in
                try read(input, into: FeedDocumentReader(deliver: onEntry, report: onProblem))
            }
        }
    }

    private struct StopReading: Error {}

    private static func read(_ input: FeedInput, into reader: FeedDocumentReader) throws -> FeedMetadata {
        let parser = XMLStreamParser(handler: reader)
        var start = SourceStart()
        do {
            try input.forEachChunk { chunk in
                start.note(chunk)
                parser.feed(chunk)
                if parser.isStopped { throw StopReading() }
            }
        } catch is StopReading {}
        parser.finish()
        if let abort = reader.abort { throw abort }
        if let failure = reader.failure { throw failure }
        guard let format = reader.format else {
            if start.isBlank { throw ImportError("empty source") }
            if start.looksLikeHTML { throw ImportError("an HTML page, not a feed") }
            let error = reader.firstError
            throw ImportError("not XML: \(error?.message ?? "no root element")", line: error?.line)
        }
        return FeedMetadata(format: format, title: reader.title, link: reader.link, hints: reader.hints)
    }
}

/// The first bytes of a source, to say why it is not a feed when libxml2
/// never found a root element: nothing but blanks, or an HTML page (whose
/// `<!doctype html>` or unquoted attributes libxml2 stops at).
private struct SourceStart {
    private var head: [UInt8] = []
    private(set) var isBlank = true

    mutating func note(_ chunk: UnsafeRawBufferPointer) {
        if head.count < 1024 { head.append(contentsOf: chunk.prefix(1024 - head.count)) }
        if isBlank { isBlank = chunk.allSatisfy { [0x20, 0x09, 0x0A, 0x0D].contains($0) } }
    }

    var looksLikeHTML: Bool {
        let text = String(decoding: head, as: UTF8.self).lowercased()
        let start = text.drop { $0.isWhitespace || $0 == "\u{FEFF}" }
        return start.hasPrefix("<!doctype html") || start.hasPrefix("<html")
    }
}
