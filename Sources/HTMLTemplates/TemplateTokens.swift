/// A Mustache template cut into text and tags, with Mustache's rule for
/// "standalone" tags applied: a line holding only a section, inverted,
/// closing, partial or comment tag (and blanks) leaves no trace in the output.
struct TemplateTokens {
    enum Kind: Equatable {
        case text([UInt8])
        case variable(escaped: Bool)
        case section
        case inverted
        case close
        case partial(indent: [UInt8])
        case comment
    }

    struct Token {
        var kind: Kind
        var name: String
        var line: Int
    }

    var tokens: [Token] = []

    /// Cuts `source` (the contents of `file`) into tokens.
    init(_ source: [UInt8], file: String) throws(TemplateError) {
        var line = 1
        var index = 0
        var textStart = 0
        func countLines(_ range: Range<Int>) { for byte in source[range] where byte == UInt8(ascii: "\n") { line += 1 } }
        while index < source.count {
            guard source[index] == UInt8(ascii: "{"), index + 1 < source.count, source[index + 1] == UInt8(ascii: "{") else {
                index += 1
                continue
            }
            if textStart < index {
                tokens.append(Token(kind: .text(Array(source[textStart..<index])), name: "", line: line))
                countLines(textStart..<index)
            }
            let tagLine = line
            let triple = index + 2 < source.count && source[index + 2] == UInt8(ascii: "{")
            let contentStart = index + (triple ? 3 : 2)
            let closer: [UInt8] = triple ? Array("}}}".utf8) : Array("}}".utf8)
            guard let contentEnd = Self.find(closer, in: source, from: contentStart) else {
                throw TemplateError(file: file, line: tagLine, message: "a tag opened with \(triple ? "{{{" : "{{") is never closed")
            }
            countLines(contentStart..<contentEnd)
            var content = Array(source[contentStart..<contentEnd])
            index = contentEnd + closer.count
            textStart = index
            if triple {
                tokens.append(Token(kind: .variable(escaped: false), name: try Self.name(content, file: file, line: tagLine), line: tagLine))
                continue
            }
            let sigil = content.first.map { Character(UnicodeScalar($0)) }
            let kind: Kind
            switch sigil {
            case "#": kind = .section
            case "^": kind = .inverted
            case "/": kind = .close
            case ">": kind = .partial(indent: [])
            case "!": kind = .comment
            case "&": kind = .variable(escaped: false)
            case "=": throw TemplateError(file: file, line: tagLine, message: "changing the delimiters ({{=...=}}) is not supported")
            case "{": throw TemplateError(file: file, line: tagLine, message: "a {{{ tag must be closed with }}}")
            default: kind = .variable(escaped: true)
            }
            if kind == .comment {
                tokens.append(Token(kind: .comment, name: "", line: tagLine))
                continue
            }
            if kind != .variable(escaped: true) { content.removeFirst() }
            tokens.append(Token(kind: kind, name: try Self.name(content, file: file, line: tagLine), line: tagLine))
        }
        if textStart < source.count { tokens.append(Token(kind: .text(Array(source[textStart...])), name: "", line: line)) }
        removeStandaloneLines()
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var index = start
        while index + needle.count <= haystack.count {
            if haystack[index] == needle[0], Array(haystack[index..<index + needle.count]) == needle { return index }
            index += 1
        }
        return nil
    }

    /// A tag's name, blanks around it trimmed: letters, digits, `_` and `-` only.
    private static func name(_ content: [UInt8], file: String, line: Int) throws(TemplateError) -> String {
        let trimmed = content.drop { isBlank($0) }.reversed().drop { isBlank($0) }.reversed()
        guard !trimmed.isEmpty else { throw TemplateError(file: file, line: line, message: "a tag has no name") }
        for byte in trimmed {
            let ok = (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            guard ok else {
                throw TemplateError(
                    file: file, line: line,
                    message: "\"\(String(decoding: trimmed, as: UTF8.self))\" is not a plain name (dotted names and {{.}} are not supported)")
            }
        }
        return String(decoding: trimmed, as: UTF8.self)
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    /// Mustache's standalone rule, decided on the tokens as cut, then applied.
    private mutating func removeStandaloneLines() {
        var dropHead = [Int](repeating: 0, count: tokens.count)
        var dropTail = [Int](repeating: 0, count: tokens.count)
        for index in tokens.indices {
            switch tokens[index].kind {
            case .section, .inverted, .close, .partial, .comment: break
            default: continue
            }
            // Only blanks between the line's start and the tag.
            var indent: [UInt8] = []
            if index > 0 {
                guard case .text(let before) = tokens[index - 1].kind else { continue }
                let lineStart = before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 }
                guard lineStart != nil || index == 1 else { continue }
                let tail = before[(lineStart ?? 0)...]
                guard tail.allSatisfy(Self.isBlank) else { continue }
                indent = Array(tail)
            }
            // Only blanks, then the line's end (or the template's), after it.
            var head = 0
            if index + 1 < tokens.count {
                guard case .text(let after) = tokens[index + 1].kind else { continue }
                while head < after.count, Self.isBlank(after[head]) { head += 1 }
                if head < after.count, after[head] == UInt8(ascii: "\r"), head + 1 < after.count, after[head + 1] == UInt8(ascii: "\n") {
                    head += 2
                } else if head < after.count, after[head] == UInt8(ascii: "\n") {
                    head += 1
                } else if !(head == after.count && index + 2 == tokens.count) {
                    continue
                }
            }
            if index > 0 { dropTail[index - 1] = indent.count }
            if index + 1 < tokens.count { dropHead[index + 1] = head }
            if case .partial = tokens[index].kind { tokens[index].kind = .partial(indent: indent) }
        }
        for index in tokens.indices {
            guard case .text(let bytes) = tokens[index].kind, dropHead[index] > 0 || dropTail[index] > 0 else { continue }
            let end = max(dropHead[index], bytes.count - dropTail[index])
            tokens[index].kind = .text(Array(bytes[dropHead[index]..<end]))
        }
    }
}
