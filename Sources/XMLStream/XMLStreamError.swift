import CXML2

/// Something wrong with a document, where it was and how bad it is.
public struct XMLStreamError: Error, Sendable, Equatable, CustomStringConvertible {
    /// How much a problem cost.
    public enum Severity: Int, Sendable, Comparable {
        /// The parser fixed the input on the way in and nothing was lost
        /// (bytes that were not UTF-8 read as windows-1252, a control
        /// character XML forbids replaced by U+FFFD).
        case repaired
        /// libxml2's warning: the document is still well-formed.
        case warning
        /// Not well-formed or not namespace-well-formed; libxml2 went on
        /// (recovery), but text or markup around this spot may be missing.
        case error
        /// libxml2 gave up here: nothing after this spot is delivered.
        case fatal

        public static func < (a: Severity, b: Severity) -> Bool { a.rawValue < b.rawValue }
    }

    /// The line (1-based) libxml2 was on; 0 when unknown.
    public var line: Int
    /// The column, when libxml2 said.
    public var column: Int?
    /// What was wrong, in plain words.
    public var message: String
    /// How bad it was.
    public var severity: Severity
    /// A namespace error (an undeclared prefix such as `media:` without its
    /// `xmlns:media`): the element is still delivered, with the prefix and no
    /// namespace URI.
    public var isNamespaceError: Bool
    /// libxml2's error code (`xmlParserErrors`), 0 for the parser's own reports.
    public var code: Int

    /// A problem.
    public init(
        line: Int, column: Int? = nil, message: String, severity: Severity, isNamespaceError: Bool = false, code: Int = 0
    ) {
        self.line = line
        self.column = column
        self.message = message
        self.severity = severity
        self.isNamespaceError = isNamespaceError
        self.code = code
    }

    public var description: String { "line \(line): \(message)" }
}

extension XMLStreamError {
    /// libxml2's message for `code` turned into a phrase an operator reads:
    /// the first line only, without the C function name some messages start
    /// with, and plain words for the errors feeds hit most.
    static func plainMessage(code: Int32, raw: String) -> String {
        var text = raw.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        text = text.trimmingCharacters(in: " \t")
        switch Int(code) {
        case Int(XML_ERR_NAME_REQUIRED.rawValue) where text.contains("EntityRef"):
            return "an '&' that starts no entity (write &amp;)"
        case Int(XML_ERR_NAME_REQUIRED.rawValue) where text.contains("StartTag"):
            return "a '<' that starts no tag (write &lt;)"
        case Int(XML_ERR_ENTITYREF_SEMICOL_MISSING.rawValue):
            return "an entity reference without its ';' (or an '&' that should be &amp;)"
        case Int(XML_ERR_ATTRIBUTE_NOT_STARTED.rawValue):
            return "an attribute value without quotes"
        case Int(XML_ERR_DOCUMENT_EMPTY.rawValue):
            return "no XML element found (this is not XML)"
        case Int(XML_ERR_TAG_NAME_MISMATCH.rawValue):
            return tagMismatch(text) ?? text
        default:
            break
        }
        // "xmlParseCharRef: invalid xmlChar value 1": the C function's name says nothing.
        if let colon = text.firstIndex(of: ":"), !text[..<colon].contains(" "), text[..<colon].hasPrefix("xml") {
            text = text[text.index(after: colon)...].trimmingCharacters(in: " ")
        }
        return text
    }

    /// "Opening and ending tag mismatch: bad line 6 and item" → "</item>
    /// closes <bad>, opened at line 6".
    private static func tagMismatch(_ text: String) -> String? {
        let words = text.split(separator: " ")
        guard let colon = words.firstIndex(where: { $0.hasSuffix(":") }), words.count == colon + 6,
            words[colon + 2] == "line", words[colon + 4] == "and"
        else { return nil }
        return "</\(words[colon + 5])> closes <\(words[colon + 1])>, opened at line \(words[colon + 3])"
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var scalars = Substring(self)
        while let first = scalars.first, set.contains(first) { scalars.removeFirst() }
        while let last = scalars.last, set.contains(last) { scalars.removeLast() }
        return String(scalars)
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String { String(self).trimmingCharacters(in: set) }
}
