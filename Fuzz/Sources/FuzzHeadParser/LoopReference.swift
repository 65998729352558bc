import HeadRules

/// What the server's own loop must make of a head, written the plain way
/// (README, "Bad input"): its own rules in the order it applies them, then
/// RFC 9112's as `ReferenceRules` states them, then the count of lines.
struct LoopReference {
    /// The status the head is refused with, nil when it passes.
    var status: Int?
    var method: [UInt8] = [], target: [UInt8] = []
    var isHTTP11 = false, closes = false, expectsContinue = false
    /// A passing head with a `Transfer-Encoding` line ends with chunked (the rules refuse any other).
    var isChunked = false
    var declaredLength: Int?
    /// The lines a handler sees: those named by a token, values without the blanks around them.
    var fields: [(name: [UInt8], value: [UInt8])] = []

    /// `head` as `HeadParser.end` found it: up to and with its empty line.
    init(_ head: [UInt8], maxHeaderCount: Int) {
        if head.contains(0) {
            status = 400
            return
        }
        var lines = head.split(separator: 0x0A, omittingEmptySubsequences: false).map { $0.last == 0x0D ? Array($0.dropLast()) : Array($0) }
        let line = lines.removeFirst()
        // A method (a token), one space, a target without one, one space, a version.
        guard let space = line.firstIndex(of: 0x20), space > 0, line[..<space].allSatisfy(Self.isTokenByte),
            let second = line[(space + 1)...].firstIndex(of: 0x20), second > space + 1
        else {
            status = 400
            return
        }
        let version = Array(line[(second + 1)...])
        if version != Array("HTTP/1.1".utf8), version != Array("HTTP/1.0".utf8) {
            status = version.count == 8 && version.starts(with: "HTTP/".utf8) ? 505 : 400
            return
        }
        if line.contains(0x0D) {
            status = 400
            return
        }
        (method, target, isHTTP11) = (Array(line[..<space]), Array(line[(space + 1)..<second]), version == Array("HTTP/1.1".utf8))
        closes = !isHTTP11
        var sent: [(name: [UInt8], value: [UInt8])] = []
        for line in lines.prefix(while: { !$0.isEmpty }) {
            // Obsolete folding and a line without a colon are refused, not guessed at.
            guard line[0] != 0x20, line[0] != 0x09, let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                status = 400
                return
            }
            let name = Array(line[..<colon])
            let value = Array(line[(colon + 1)...].drop(while: Self.isBlank).reversed().drop(while: Self.isBlank).reversed())
            switch ReferenceRules.asciiLowercased(name) {
            case Array("content-length".utf8):
                // One line, digits only, at most 18 of them.
                guard declaredLength == nil, !value.isEmpty, value.allSatisfy({ (0x30...0x39).contains($0) }) else {
                    status = 400
                    return
                }
                guard value.count <= 18 else {
                    status = 413
                    return
                }
                declaredLength = Int(String(decoding: value, as: UTF8.self))
            case Array("connection".utf8):
                if Self.has(value, "close") { closes = true } else if Self.has(value, "keep-alive") { closes = false }
            case Array("transfer-encoding".utf8):
                isChunked = true
            case Array("expect".utf8):
                expectsContinue = ReferenceRules.asciiLowercased(value) == Array("100-continue".utf8)
            default:
                break
            }
            sent.append((name, value))
        }
        if let refused = ReferenceRules.status(HeadLines(version: version, fields: sent)) {
            status = refused
        } else if sent.count > maxHeaderCount {
            status = 431
        }
        fields = sent.filter { !$0.name.isEmpty && $0.name.allSatisfy(Self.isTokenByte) }
    }

    /// Whether the comma-separated `list` names `token`, ignoring ASCII case.
    private static func has(_ list: [UInt8], _ token: String) -> Bool {
        list.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).contains { piece in
            ReferenceRules.asciiLowercased(Array(piece.drop(while: isBlank).reversed().drop(while: isBlank).reversed())) == Array(token.utf8)
        }
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    /// RFC 9110's tchar.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
    }

    /// Where a head at the start of `bytes` ends, looked for byte by byte: past
    /// the first line end (LF) followed by an empty line (LF, or CR LF).
    static func end(of bytes: [UInt8]) -> Int? {
        for index in bytes.indices where bytes[index] == 0x0A {
            if index + 1 < bytes.count, bytes[index + 1] == 0x0A { return index + 2 }
            if index + 2 < bytes.count, bytes[index + 1] == 0x0D, bytes[index + 2] == 0x0A { return index + 3 }
        }
        return nil
    }
}
