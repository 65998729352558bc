extension ResponseFreshness {
    /// The freshness that these header values say, each nil when its header
    /// was not sent (a header sent on several lines comes joined with ", ",
    /// as RFC 9110 §5.3 joins them). `now`, in seconds since 1970, only
    /// places the two-digit years of RFC 850 dates (see ``HTTPDate``).
    init(cacheControl: String?, expires: String?, date: String?, age: String?, retryAfter: String?, now: Int64) {
        let directives = cacheControl.map(Self.directives) ?? (maxAge: nil, noStore: false)
        let expiry = expires.map { HTTPDate.secondsSince1970($0, now: now) }
        self.init(
            maxAge: directives.maxAge, noStore: directives.noStore,
            age: age.flatMap { Self.deltaSeconds($0.utf8) },
            expires: expiry ?? nil, expiresIsInvalid: expiry.map { $0 == nil } ?? false,
            date: date.flatMap { HTTPDate.secondsSince1970($0, now: now) },
            retryAfter: retryAfter.flatMap { value in
                if let delay = Self.deltaSeconds(value.utf8) { return .seconds(delay) }
                return HTTPDate.secondsSince1970(value, now: now).map { .date($0) }
            })
    }

    /// RFC 9111 §1.2.2's delta-seconds, `1*DIGIT`: nil for anything else (a
    /// sign, a fraction, a blank, nothing); a larger number than
    /// ``maxDeltaSeconds`` is that, as the RFC says, however many digits it has.
    static func deltaSeconds(_ bytes: some Collection<UInt8>) -> Int? {
        guard !bytes.isEmpty else { return nil }
        var value = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            // At most 2^31 · 10 + 9 before the clamp: no overflow, however long the number.
            value = min(value * 10 + Int(byte - UInt8(ascii: "0")), maxDeltaSeconds)
        }
        return value
    }

    /// What `Cache-Control` says of freshness (RFC 9111 §5.2): `max-age`,
    /// when every `max-age` in it is the same number; and whether it says
    /// `no-store`, or `no-cache` with no field names (with some, only those
    /// fields may not be reused, RFC 9111 §5.2.2.4). Names are read in any
    /// case, arguments as tokens or quoted strings; an element that does not
    /// follow the grammar is skipped, and `max-age` with no number in it
    /// makes `max-age` nil.
    static func directives(_ value: String) -> (maxAge: Int?, noStore: Bool) {
        var maxAges: [Int?] = []
        var noStore = false
        var reader = DirectiveReader(Array(value.utf8))
        while let directive = reader.next() {
            switch directive.name {
            case "max-age":
                maxAges.append(directive.argument.flatMap { deltaSeconds($0) })
            case "no-store":
                noStore = true
            case "no-cache" where directive.argument == nil:
                noStore = true
            default:
                break
            }
        }
        guard let first = maxAges.first, maxAges.allSatisfy({ $0 == first }) else { return (nil, noStore) }
        return (first, noStore)
    }
}

/// Reads `Cache-Control`'s list, `#( token [ "=" ( token / quoted-string ) ] )`,
/// one directive at a time; skips what does not follow it.
private struct DirectiveReader {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The next well-formed directive: its name lowercased, and its argument
    /// (a quoted string's content, unescaped), if it has one. Nil at the end.
    mutating func next() -> (name: String, argument: [UInt8]?)? {
        while index < bytes.count {
            skip { $0 == UInt8(ascii: ",") || Self.isBlank($0) }
            guard index < bytes.count else { return nil }
            let name = take(while: Self.isTokenByte)
            skip(while: Self.isBlank)
            var argument: [UInt8]?
            var wellFormed = !name.isEmpty
            if wellFormed, index < bytes.count, bytes[index] == UInt8(ascii: "=") {
                index += 1
                skip(while: Self.isBlank)
                if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                    argument = quotedString()
                    wellFormed = argument != nil
                } else {
                    argument = take(while: Self.isTokenByte)
                    wellFormed = argument?.isEmpty == false
                }
                skip(while: Self.isBlank)
            }
            if wellFormed, index == bytes.count || bytes[index] == UInt8(ascii: ",") {
                let lowercased = name.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }
                return (String(decoding: lowercased, as: UTF8.self), argument)
            }
            skipElement()
        }
        return nil
    }

    /// A quoted string's content, the index past its closing quote; nil (and
    /// the index at the end) when it is never closed.
    private mutating func quotedString() -> [UInt8]? {
        var content: [UInt8] = []
        index += 1
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "\"") { return content }
            if byte == UInt8(ascii: "\\") {
                guard index < bytes.count else { break }
                content.append(bytes[index])
                index += 1
            } else {
                content.append(byte)
            }
        }
        return nil
    }

    /// Moves past the rest of an element that does not follow the grammar:
    /// to the next comma outside a quoted string, or the end.
    private mutating func skipElement() {
        var quoted = false
        while index < bytes.count {
            let byte = bytes[index]
            if quoted, byte == UInt8(ascii: "\\") {
                index += 2
                continue
            }
            if byte == UInt8(ascii: "\"") { quoted.toggle() }
            if !quoted, byte == UInt8(ascii: ",") { return }
            index += 1
        }
        index = bytes.count
    }

    private mutating func skip(while matches: (UInt8) -> Bool) {
        while index < bytes.count, matches(bytes[index]) { index += 1 }
    }

    private mutating func take(while matches: (UInt8) -> Bool) -> [UInt8] {
        let start = index
        skip(while: matches)
        return Array(bytes[start..<index])
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 32 || byte == 9 }

    /// RFC 9110 §5.6.2's tchar.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
