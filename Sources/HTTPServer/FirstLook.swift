/// A first look at the bytes a new connection has sent, before its worker
/// reads them: a request line that begins as RFC 9112 says (a method token
/// and one space), no NUL or bare CR anywhere in the head, a `Content-Length`
/// that is one number, and cookies within the limits. (`HeadParser` holds
/// every later head of a connection to the same rules.)
///
/// Made for libmicrohttpd, the loop before the server's own. libmicrohttpd
/// 0.9.75 closed a connection without a word when a request line had no
/// space in it (`GET\r\n`, a tab-separated line) or began with one; it took
/// a line that began with a NUL for an empty line and waited for more; and
/// it handed header values over as C strings, so a value with a NUL in it
/// arrived cut short. And its own answers to a `Content-Length` it could not
/// read (`abc`, `-1`, `+5`, `0x10`, `5, 5`, empty, `1 0`, or past 64 bits)
/// and to a Cookie its per-connection memory could not split (16 KB of one,
/// hundreds of pairs) carried their header block twice: its state machine
/// built the error's head, then built it again (fixed upstream only in
/// 1.0.0), so a client read the second head as the body. None of our
/// callbacks was called for those, so the server looked first and answered
/// itself, once. Everything else is `HeadParser`'s and `RequestHead`'s to judge.
///
/// It judges what has arrived, byte by byte, and refuses at the first byte
/// that breaks a rule: more bytes never clear a head it refused, and never
/// change why.
///
/// Public only to `@_spi(Testing) import HTTPServer`, for tests.
@_spi(Testing) public enum FirstLook: Equatable, Sendable {
    /// Nothing wrong in what has arrived.
    case fine
    /// A byte where RFC 9112 allows none (in the request line, a NUL or a bare CR): 400.
    case malformed
    /// A head the server refuses with `status` (400, 413 or 431) and a short reason.
    case refused(status: Int, reason: String)

    /// The most bytes of cookies a head may carry (nginx refuses a header line over 8 KB).
    public static let cookieBytesLimit = 8192
    /// The most cookies (name=value pairs) a head may carry.
    public static let cookiePairsLimit = 100
    /// The largest head that carries a cookie. Measured on 0.9.75 with a 32 KiB
    /// connection pool: 100 cookies of 8 KB in all fit in heads up to 17.5 KB,
    /// and larger heads got the doubled 431 or were closed without a word.
    public static let headWithCookiesLimit = 16 * 1024

    /// The status and the message a refusal is answered with.
    public var answer: (status: Int, message: String)? {
        switch self {
        case .fine: nil
        case .malformed: (400, "a request line must begin with a method and one space, and a head holds no NUL or bare CR")
        case .refused(let status, let reason): (status, reason)
        }
    }

    /// Judges the first bytes a connection sent, up to the end of its head.
    public init(_ bytes: UnsafeRawBufferPointer) {
        var index = 0
        // RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request line.
        while index < bytes.count, bytes[index] == 0x0d || bytes[index] == 0x0a {
            if bytes[index] == 0x0d, index + 1 < bytes.count, bytes[index + 1] != 0x0a { self = .malformed; return }
            index += 1
        }
        let methodStart = index
        while index < bytes.count, Self.isTokenByte(bytes[index]) { index += 1 }
        guard index < bytes.count else { self = .fine; return }
        guard index > methodStart, bytes[index] == 0x20 else { self = .malformed; return }
        var fields = FieldRules(headStart: methodStart)
        var onRequestLine = true
        // The rest of the head, to its empty line: no NUL, no CR without its LF.
        var lineLength = 1
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case 0:
                self = .malformed
                return
            case 0x0d where index + 1 == bytes.count:
                // What follows decides (a bare CR, or a line's end): nothing more is judged yet.
                self = .fine
                return
            case 0x0d where bytes[index + 1] != 0x0a:
                self = .malformed
                return
            case 0x0a:
                if lineLength == 0 || (lineLength == 1 && bytes[index - 1] == 0x0d) { self = .fine; return }
                if !onRequestLine, let refusal = fields.lineEnded() { self = refusal; return }
                onRequestLine = false
                lineLength = 0
            default:
                if !onRequestLine, let refusal = fields.take(byte, at: index) { self = refusal; return }
                lineLength += 1
            }
            index += 1
        }
        self = .fine
    }

    /// The rules on header fields, fed one byte at a time.
    private struct FieldRules {
        enum Field { case other, contentLength, cookie }

        /// Where the request line begins: the head's size counts from there.
        let headStart: Int
        var field = Field.other
        /// The field's name so far, lowercased (its first 16 bytes: enough to tell ours).
        var name: [UInt8] = []
        var inValue = false
        var contentLengths = 0
        var digits = 0
        var spaceAfterDigits = false
        var cookieBytes = 0
        var cookiePairs = 0
        var carriesCookies = false

        init(headStart: Int) {
            self.headStart = headStart
            name.reserveCapacity(16)
        }

        /// Takes a byte of a header line, other than its LF.
        mutating func take(_ byte: UInt8, at index: Int) -> FirstLook? {
            if carriesCookies, index - headStart >= FirstLook.headWithCookiesLimit {
                return .refused(status: 431, reason: "a head that carries cookies may be at most \(FirstLook.headWithCookiesLimit) bytes")
            }
            guard inValue else {
                if byte == UInt8(ascii: ":") { return nameEnded() }
                if name.count < 16 { name.append(byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte) }
                return nil
            }
            switch field {
            case .other:
                return nil
            case .contentLength:
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"):
                    if spaceAfterDigits { return Self.badContentLength }
                    digits += 1
                    // Past 10^18 bytes: a length no body here may have, and one libmicrohttpd's 64 bits may not hold.
                    if digits > 18 { return .refused(status: 413, reason: "the request body is far too large") }
                    return nil
                case 0x20, 0x09:
                    if digits > 0 { spaceAfterDigits = true }
                    return nil
                case 0x0d:
                    return nil
                default:
                    return Self.badContentLength
                }
            case .cookie:
                cookieBytes += 1
                if byte == UInt8(ascii: ";") { cookiePairs += 1 }
                if cookieBytes > FirstLook.cookieBytesLimit {
                    return .refused(status: 431, reason: "cookies may be at most \(FirstLook.cookieBytesLimit) bytes in all")
                }
                if cookiePairs > FirstLook.cookiePairsLimit {
                    return .refused(status: 431, reason: "at most \(FirstLook.cookiePairsLimit) cookies")
                }
                return nil
            }
        }

        /// The colon after a field's name.
        private mutating func nameEnded() -> FirstLook? {
            inValue = true
            if name.elementsEqual("content-length".utf8) {
                field = .contentLength
                contentLengths += 1
                if contentLengths > 1 { return .refused(status: 400, reason: "more than one Content-Length") }
            } else if name.elementsEqual("cookie".utf8) {
                field = .cookie
                carriesCookies = true
                cookiePairs += 1
            }
            return nil
        }

        /// A header line ended (its LF arrived).
        mutating func lineEnded() -> FirstLook? {
            defer {
                field = .other
                name.removeAll(keepingCapacity: true)
                inValue = false
                digits = 0
                spaceAfterDigits = false
            }
            if field == .contentLength, digits == 0 { return Self.badContentLength }
            return nil
        }

        static let badContentLength = FirstLook.refused(status: 400, reason: "Content-Length must be one number, of digits only")
    }

    /// RFC 9110's `tchar`: what a method and a field name are made of.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }
}
