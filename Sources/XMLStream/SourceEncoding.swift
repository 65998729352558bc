/// How the bytes of a document are turned into what libxml2 reads.
///
/// Decided once, from the byte order mark and the XML declaration:
/// - UTF-8 (declared, or nothing declared, or US-ASCII declared): the bytes
///   pass through `InputTranscoder`, which keeps valid UTF-8 and reads any
///   byte that is not as windows-1252, so a feed that declares UTF-8 but holds
///   Latin-1 loses nothing.
/// - ISO-8859-1 or windows-1252 declared: decoded here as windows-1252 (as
///   browsers do for both labels: the bytes 0x80–0x9F that ISO-8859-1 leaves
///   to control characters are the curly quotes and dashes such feeds mean).
/// - Anything else (a UTF-16 or UTF-32 byte order mark or pattern, another
///   declared encoding): left to libxml2, which honours the declaration.
enum SourceEncoding: Equatable {
    case utf8
    case windows1252
    case declared

    /// The encoding `prolog` (the first bytes of the document) calls for, or
    /// nil while more bytes are needed to tell; `isComplete` says there are
    /// no more.
    static func sniff(_ prolog: [UInt8], isComplete: Bool) -> SourceEncoding? {
        if prolog.starts(with: utf8BOM) { return .utf8 }
        if otherPatterns.contains(where: { prolog.starts(with: $0) }) { return .declared }
        // Too short yet to rule out a byte order mark or a UTF-16 pattern.
        if !isComplete && (utf8BOM.starts(with: prolog) || otherPatterns.contains { $0.starts(with: prolog) }) {
            return nil
        }
        guard prolog.starts(with: xmlDeclarationStart) else {
            return !isComplete && xmlDeclarationStart.starts(with: prolog) ? nil : .utf8
        }
        guard let end = declarationEnd(prolog) else {
            // An XML declaration is short; one this long is broken, and libxml2 will say so.
            return isComplete || prolog.count > 512 ? .utf8 : nil
        }
        guard let label = encodingLabel(in: prolog[..<end]) else { return .utf8 }
        if utf8Labels.contains(label) { return .utf8 }
        if windows1252Labels.contains(label) { return .windows1252 }
        return .declared
    }

    private static let utf8BOM: [UInt8] = [0xEF, 0xBB, 0xBF]
    private static let xmlDeclarationStart = Array("<?xml".utf8)
    /// UTF-16 and UTF-32 byte order marks, `<?` in UTF-16 and UTF-32 without
    /// one, and `<?xm` in EBCDIC.
    private static let otherPatterns: [[UInt8]] = [
        [0x00, 0x00, 0xFE, 0xFF], [0xFF, 0xFE, 0x00, 0x00], [0xFE, 0xFF], [0xFF, 0xFE],
        [0x00, 0x00, 0x00, 0x3C], [0x3C, 0x00, 0x00, 0x00], [0x00, 0x3C, 0x00, 0x3F], [0x3C, 0x00, 0x3F, 0x00],
        [0x4C, 0x6F, 0xA7, 0x94],
    ]
    private static let utf8Labels: Set<String> = ["utf-8", "utf8", "unicode-1-1-utf-8", "us-ascii", "ascii", "ansi_x3.4-1968"]
    private static let windows1252Labels: Set<String> = [
        "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "windows-1252", "cp1252", "x-cp1252",
    ]

    private static func declarationEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 2 else { return nil }
        for index in 1..<bytes.count where bytes[index] == UInt8(ascii: ">") && bytes[index - 1] == UInt8(ascii: "?") {
            return index
        }
        return nil
    }

    /// The value of `encoding="…"` in the declaration, lowercased.
    private static func encodingLabel(in declaration: ArraySlice<UInt8>) -> String? {
        let bytes = Array(declaration)
        let keyword = Array("encoding".utf8)
        guard bytes.count > keyword.count,
            var index = (0...(bytes.count - keyword.count)).first(where: { bytes[$0..<($0 + keyword.count)].elementsEqual(keyword) })
        else { return nil }
        index += keyword.count
        func skipSpace() { while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 } }
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { return nil }
        index += 1
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else { return nil }
        let quote = bytes[index]
        let value = bytes[(index + 1)...].prefix { $0 != quote }
        return String(decoding: value, as: UTF8.self).lowercased()
    }
}
