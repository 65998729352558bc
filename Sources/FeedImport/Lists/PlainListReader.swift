/// Reads a plain list: UTF-8 text, one source a line, the way an operator
/// writes one by hand.
///
/// Lines are trimmed; blank lines and lines starting with `#` are skipped;
/// every other line is an address (a URL, or in a list read from a file a
/// path, relative ones beside the list), checked as an OPML `xmlUrl` is.
enum PlainListReader {
    /// Reads the list `input` whole into `builder`.
    static func read(_ input: FeedInput, into builder: SourceListBuilder) throws(ImportError) -> SourceListBuilder {
        var bytes: [UInt8] = []
        try SourceList.forEachChunk(of: input) { chunk in
            bytes.append(contentsOf: chunk)
            return true
        }
        var builder = builder
        var text = bytes[...]
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }
        for (index, line) in text.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            guard let line = String(validating: line, as: UTF8.self) else {
                builder.report(ImportProblem(line: index + 1, reason: "a line that is not UTF-8"))
                continue
            }
            let address = line.trimmingFeedSpace()
            if address.isEmpty || address.hasPrefix("#") { continue }
            builder.add(address, line: index + 1)
            if builder.isFull { break }
        }
        return builder
    }

    /// Whether `head`, the start of a document (`isCut`: there is more),
    /// reads as a plain list: UTF-8 whose every line is blank, a comment, or
    /// looks like an address. The last line of a cut start may be cut
    /// anywhere, so it is judged only when it is the only line.
    static func looksLikeList(_ head: ArraySlice<UInt8>, isCut: Bool) -> Bool {
        var lines = head.split(separator: 0x0A, omittingEmptySubsequences: false)
        let onlyLineIsCut = isCut && lines.count == 1
        if isCut && !onlyLineIsCut { lines.removeLast() }
        return lines.allSatisfy { line in
            // At a cut, up to three bytes of the last character may be missing.
            let slack = onlyLineIsCut ? min(3, line.count) : 0
            guard let text = (0...slack).lazy.compactMap({ String(validating: line.dropLast($0), as: UTF8.self) }).first else { return false }
            return isEntryLike(text)
        }
    }

    /// Whether `line` is blank, a comment, a URL, or a path: absolute or
    /// `./`-relative, or one word that holds a `/` or a `.` (`feeds/a.xml`,
    /// `news.rss`). A URL of a scheme the reader refuses (`javascript:`,
    /// `htps:`) still counts: the list is read, and that line is a problem
    /// with its line number. Prose is none of these.
    private static func isEntryLike(_ line: String) -> Bool {
        let text = line.trimmingFeedSpace()
        if text.isEmpty || text.hasPrefix("#") { return true }
        let lowercased = text.lowercased()
        if ["http://", "https://", "feed:", "file:"].contains(where: { lowercased.hasPrefix($0) }) { return true }
        guard !text.unicodeScalars.contains(where: SourceLocation.isControl) else { return false }
        if text.hasPrefix("/") || text.hasPrefix("./") || text.hasPrefix("../") { return true }
        guard !text.unicodeScalars.contains(where: \.properties.isWhitespace) else { return false }
        if let scheme = SourceLocation.scheme(of: text) { return text.count > scheme.count + 1 }
        let startsLikeMarkup = text.first.map { "<{[\"'".contains($0) } ?? true
        return !text.contains(":") && (text.contains("/") || text.contains(".")) && !startsLikeMarkup
    }
}
