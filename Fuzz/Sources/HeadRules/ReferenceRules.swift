/// RFC 9112's head rules as Warmfeed applies them (README, "Bad input"),
/// written the plain way, over the lines as the server gets them: what
/// `RequestHead` must agree with. Header names and transfer codings are
/// tokens, so case is ASCII case.
public enum ReferenceRules {
    /// The status a head gets: 400, 501, or nil when it passes.
    public static func status(_ head: HeadLines) -> Int? {
        let names = head.fields.map { asciiLowercased($0.name) }
        let blanks: Set<UInt8> = [0x20, 0x09]
        let lineBreaks: Set<UInt8> = [0x0D, 0x0A]
        // A name that is empty or holds whitespace (before its colon, say).
        if head.fields.contains(where: { $0.name.isEmpty || $0.name.contains(where: blanks.contains) }) { return 400 }
        // A CR or LF left inside a name or value: a bare CR.
        if head.fields.contains(where: { $0.name.contains(where: lineBreaks.contains) || $0.value.contains(where: lineBreaks.contains) }) {
            return 400
        }
        let hosts = names.filter { $0 == Array("host".utf8) }.count
        if head.version == Array("HTTP/1.1".utf8), hosts != 1 { return 400 }
        if hosts > 1 { return 400 }
        let encodings = head.fields.filter { asciiLowercased($0.name) == Array("transfer-encoding".utf8) }.map(\.value)
        if encodings.isEmpty { return nil }
        if names.contains(Array("content-length".utf8)) { return 400 }
        let codings = encodings.joined(separator: [UInt8(ascii: ",")])
            .split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
            .map { asciiLowercased(Array($0.drop(while: blanks.contains).reversed().drop(while: blanks.contains).reversed())) }
            .filter { !$0.isEmpty }
        let chunked = Array("chunked".utf8)
        if codings.filter({ $0 == chunked }).count > 1 || (codings.contains(chunked) && codings.last != chunked) { return 400 }
        if codings.contains(where: { $0 != chunked }) { return 501 }
        return nil
    }

    public static func asciiLowercased(_ bytes: [UInt8]) -> [UInt8] {
        bytes.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }
    }
}
