/// Markup from a feed turned into plain text, and the first image it shows.
///
/// The text that comes out is only ever rendered escaped, so nothing in it can
/// run; stripping tags here is about what a reader sees (no `<p>` litter), not
/// about safety. `<script>`, `<style>` and comments go with their content.
public enum HTMLText {
    /// The readable text of `html`: tags removed, entities decoded, runs of
    /// white space (and control characters) collapsed to one space, trimmed.
    public static func plainText(_ html: String) -> String {
        let bytes = Array(html.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(min(bytes.count, 1 << 20))
        var index = 0
        var pendingSpace = false
        func emit(_ byte: UInt8) {
            if pendingSpace, !out.isEmpty { out.append(0x20) }
            pendingSpace = false
            out.append(byte)
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "<"), let tag = Tag.read(bytes, at: index) {
                index = tag.end
                if tag.skipsContent, !tag.closing, let close = closingTag(named: tag.name, in: bytes, from: index) {
                    index = close
                }
                pendingSpace = pendingSpace || tag.separates
                continue
            }
            if byte == UInt8(ascii: "&"), let (scalarBytes, next) = Entities.decode(bytes, at: index) {
                index = next
                // A decoded control character or no-break space is white space like any other.
                if scalarBytes.count == 1 && (scalarBytes[0] <= 0x20 || scalarBytes[0] == 0x7F) || scalarBytes == [0xC2, 0xA0] {
                    pendingSpace = true
                } else {
                    scalarBytes.forEach(emit)
                }
                continue
            }
            if byte <= 0x20 || byte == 0x7F {
                pendingSpace = true
            } else {
                emit(byte)
            }
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The `src` (and declared size) of the first `<img>` in `html` that is
    /// not a tracking pixel, or nil.
    public static func firstImage(_ html: String) -> (src: String, width: Int?, height: Int?)? {
        let bytes = Array(html.utf8)
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "<"), let tag = Tag.read(bytes, at: index) else {
                index += 1
                continue
            }
            index = tag.end
            guard tag.name == "img", !tag.closing, let src = tag.attributes["src"] else { continue }
            let width = tag.attributes["width"].flatMap { Int($0) }
            let height = tag.attributes["height"].flatMap { Int($0) }
            if let width, let height, width <= 2, height <= 2 { continue }
            let trimmed = plainText(src)
            if trimmed.isEmpty { continue }
            return (trimmed, width, height)
        }
        return nil
    }

    /// Where the end of `</name>` is, after `from`; nil when the element is never closed.
    private static func closingTag(named name: String, in bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "<"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "/"),
                let tag = Tag.read(bytes, at: index), tag.name == name
            {
                return tag.end
            }
            index += 1
        }
        return bytes.count
    }
}

/// One tag read leniently, as browsers read them.
private struct Tag {
    var name: String
    var closing: Bool
    var attributes: [String: String]
    /// The index just past `>`.
    var end: Int

    /// Elements whose content is not text a reader sees.
    var skipsContent: Bool { name == "script" || name == "style" || name == "template" || name == "noscript" }
    /// Elements that separate words.
    var separates: Bool {
        switch name {
        case "a", "b", "i", "em", "strong", "span", "small", "sub", "sup", "code", "abbr", "mark", "u", "s": return false
        default: return true
        }
    }

    /// The tag starting at `start` (a `<`), or nil when it is not one (a lone `<` in text).
    static func read(_ bytes: [UInt8], at start: Int) -> Tag? {
        var index = start + 1
        guard index < bytes.count else { return nil }
        // Comments, doctypes and processing instructions vanish whole.
        if bytes[index] == UInt8(ascii: "!") || bytes[index] == UInt8(ascii: "?") {
            if bytes[index...].starts(with: Array("!--".utf8)) {
                var probe = index + 3
                while probe + 2 < bytes.count {
                    if bytes[probe] == UInt8(ascii: "-"), bytes[probe + 1] == UInt8(ascii: "-"), bytes[probe + 2] == UInt8(ascii: ">") {
                        return Tag(name: "!--", closing: false, attributes: [:], end: probe + 3)
                    }
                    probe += 1
                }
                return Tag(name: "!--", closing: false, attributes: [:], end: bytes.count)
            }
            let end = bytes[index...].firstIndex(of: UInt8(ascii: ">")).map { $0 + 1 } ?? bytes.count
            return Tag(name: "!", closing: false, attributes: [:], end: end)
        }
        let closing = bytes[index] == UInt8(ascii: "/")
        if closing { index += 1 }
        let nameStart = index
        while index < bytes.count, isNameByte(bytes[index]) { index += 1 }
        guard index > nameStart, isLetter(bytes[nameStart]) else { return nil }
        let name = String(decoding: bytes[nameStart..<index], as: UTF8.self).lowercased()
        var attributes: [String: String] = [:]
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: ">") { return Tag(name: name, closing: closing, attributes: attributes, end: index + 1) }
            if byte <= 0x20 || byte == UInt8(ascii: "/") {
                index += 1
                continue
            }
            let keyStart = index
            while index < bytes.count, bytes[index] > 0x20, bytes[index] != UInt8(ascii: "="), bytes[index] != UInt8(ascii: ">"),
                bytes[index] != UInt8(ascii: "/")
            {
                index += 1
            }
            let key = String(decoding: bytes[keyStart..<index], as: UTF8.self).lowercased()
            while index < bytes.count, bytes[index] <= 0x20 { index += 1 }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else {
                if index == keyStart { index += 1 }
                attributes[key] = attributes[key] ?? ""
                continue
            }
            index += 1
            while index < bytes.count, bytes[index] <= 0x20 { index += 1 }
            var valueStart = index
            var valueEnd = index
            if index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") {
                let quote = bytes[index]
                valueStart = index + 1
                valueEnd = bytes[valueStart...].firstIndex(of: quote) ?? bytes.count
                index = min(bytes.count, valueEnd + 1)
            } else {
                while index < bytes.count, bytes[index] > 0x20, bytes[index] != UInt8(ascii: ">") { index += 1 }
                valueEnd = index
            }
            if attributes[key] == nil {
                attributes[key] = String(decoding: bytes[valueStart..<valueEnd], as: UTF8.self)
            }
        }
        return Tag(name: name, closing: closing, attributes: attributes, end: bytes.count)
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (65...90).contains(byte) || (97...122).contains(byte) }
    private static func isNameByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || (48...57).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ":")
    }
}
