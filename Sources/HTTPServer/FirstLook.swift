/// A first look at the bytes a new connection has sent, before libmicrohttpd
/// reads them: a request line that begins as RFC 9112 says (a method token
/// and one space), and no NUL or bare CR anywhere in the head.
///
/// libmicrohttpd 0.9.75 closes a connection without a word when a request
/// line has no space in it (`GET\r\n`, a tab-separated line) or begins with
/// one; it takes a line that begins with a NUL for an empty line and waits
/// for more; and it hands header values over as C strings, so a value with a
/// NUL in it arrives cut short. None of our callbacks can tell, so the server
/// looks first and answers 400 itself. Everything else is libmicrohttpd's and
/// `RequestHead`'s to judge.
///
/// Public only to `@_spi(Testing) import HTTPServer`, for tests.
@_spi(Testing) public enum FirstLook: Equatable, Sendable {
    /// Nothing wrong in what has arrived.
    case fine
    /// A byte where RFC 9112 allows none: the connection gets a 400.
    case malformed

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
        // The rest of the head, to its empty line: no NUL, no CR without its LF.
        var lineLength = 1
        while index < bytes.count {
            switch bytes[index] {
            case 0:
                self = .malformed
                return
            case 0x0d where index + 1 < bytes.count && bytes[index + 1] != 0x0a:
                self = .malformed
                return
            case 0x0a:
                if lineLength == 0 || (lineLength == 1 && bytes[index - 1] == 0x0d) { self = .fine; return }
                lineLength = 0
            default:
                lineLength += 1
            }
            index += 1
        }
        self = .fine
    }

    /// RFC 9110's `tchar`.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
