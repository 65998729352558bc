import Foundation
import XMLStream

/// The text of one field element being read (an entry's `title`, a
/// channel's `link`), capped at `XMLFeedParser.fieldLimit` bytes.
///
/// Markup inside the field is kept as markup: Atom's `type="xhtml"` content
/// (the wrapping `div` left out, text escaped, so the result is HTML) and the
/// raw tags some RSS feeds put in a `description`.
struct FieldCapture {
    /// Where the text goes once the field ends.
    enum Target: Equatable {
        case id, title, summary, content, link, published, updated
        /// RSS `guid`; with `isPermaLink` (the default) it is also the link.
        case guid(isPermaLink: Bool)
        case feedTitle, feedLink
        /// The channel's hints: RSS `ttl`, and one `hour` of `skipHours` or `day` of `skipDays`.
        case feedTTL, skipHour, skipDay
    }

    /// How the field's content becomes text.
    enum Mode {
        /// Character data as is (entities already decoded); nested tags reserialized.
        case text
        /// Atom `type="text"` content, escaped so that it is HTML.
        case escaped
        /// Atom `type="xhtml"`: the markup inside the wrapping `div`, as HTML.
        case xhtml
    }

    let target: Target
    let mode: Mode
    /// The depth of the field element (the root is 1).
    let depth: Int
    /// The line of the field element.
    let line: Int
    private(set) var buffer = XMLTextBuffer(limit: XMLFeedParser.fieldLimit)
    /// Elements open inside the field.
    private var nested = 0
    private var skippedWrapper = false

    init(_ target: Target, mode: Mode = .text, depth: Int, line: Int) {
        self.target = target
        self.mode = mode
        self.depth = depth
        self.line = line
    }

    /// The text, without surrounding whitespace; nil when there is none.
    var value: String? {
        let text = buffer.trimmedText
        return text.isEmpty ? nil : text
    }

    mutating func start(_ element: XMLStartElement) {
        nested += 1
        if mode == .xhtml && nested == 1 && element.name.is("div", in: FeedNamespace.xhtml) {
            skippedWrapper = true
            return
        }
        var tag = "<" + tagName(element.name)
        for attribute in element.attributes {
            tag += " \(attribute.name.qualifiedName)=\"\(Self.escaped(attribute.value, quotes: true))\""
        }
        buffer.append(tag + ">")
    }

    mutating func end(_ name: XMLName) {
        defer { nested -= 1 }
        if nested == 1 && skippedWrapper { return }
        if Self.voidElements.contains(name.localName.lowercased()) { return }
        buffer.append("</\(tagName(name))>")
    }

    mutating func text(_ utf8: UnsafeRawBufferPointer) {
        guard mode != .text else {
            buffer.append(utf8)
            return
        }
        var runStart = 0
        for (index, byte) in utf8.enumerated() {
            let replacement: String
            switch byte {
            case UInt8(ascii: "&"): replacement = "&amp;"
            case UInt8(ascii: "<"): replacement = "&lt;"
            case UInt8(ascii: ">"): replacement = "&gt;"
            default: continue
            }
            buffer.append(UnsafeRawBufferPointer(rebasing: utf8[runStart..<index]))
            buffer.append(replacement)
            runStart = index + 1
        }
        buffer.append(UnsafeRawBufferPointer(rebasing: utf8[runStart...]))
    }

    private func tagName(_ name: XMLName) -> String {
        mode == .xhtml ? name.localName : name.qualifiedName
    }

    /// HTML elements that have no end tag (`</br>` reads as a second `<br>`).
    private static let voidElements: Set<String> = [
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr",
    ]

    static func escaped(_ text: String, quotes: Bool) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"" where quotes: result += "&quot;"
            default: result.append(character)
            }
        }
        return result
    }
}
