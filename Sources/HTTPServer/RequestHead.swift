import HTTPTypes

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The checks RFC 9112 asks of a request head (which libmicrohttpd 0.9.75,
/// the loop before the server's own, let through), made on the head's parsed lines before anything is answered: a
/// request that breaks one gets a clear 400 or 501 at once, never a guess, a
/// 200 for a request smuggled past a proxy, or a wait for a body that a
/// coding nobody here speaks would frame.
///
/// Every request passes here, so the lines are read as C strings in the
/// connection's buffer (`HeadParser` ends each with a NUL), byte by byte, and only what the rules need is kept:
/// nothing is allocated for a well-formed head without `Transfer-Encoding`.
///
/// Public only to `@_spi(Testing) import HTTPServer`: the fuzz harness in
/// `Fuzz/` hands it the lines of heads it makes up.
@_spi(Testing) public struct RequestHead {
    /// Why a head is refused: 400, or 501 for a transfer coding nobody here speaks.
    public typealias Problem = HTTPProblem

    private var hosts = 0
    private var contentLength = false
    /// The body's length as declared (saturating), once a `Content-Length` line was noted.
    public private(set) var declaredLength: Int?
    private var transferEncoding: [UInt8]?
    private var badName = false
    private var badByte = false

    /// A head with no line noted yet.
    public init() {}

    /// Takes one header line: `name` and `value` as sent (NUL-terminated).
    /// Returns their lengths, measured on the way, so the line's field is made
    /// without reading its bytes a second time.
    @discardableResult
    public mutating func note(name: UnsafePointer<CChar>, value: UnsafePointer<CChar>?) -> (name: Int, value: Int) {
        // glibc's strlen and strcspn read a line's bytes a vector at a time;
        // byte by byte in Swift this was 2% of a reader's page (perf, pinned).
        let length = strlen(name)
        if length == 0 { badName = true }
        let clean = strcspn(name, " \t\r\n")
        if clean < length {
            if strcspn(name, " \t") < length { badName = true }
            if strcspn(name, "\r\n") < length { badByte = true }
        }
        var valueLength = 0
        if let value {
            valueLength = strlen(value)
            if strcspn(value, "\r\n") < valueLength { badByte = true }
        }
        if Self.named(name, length, "host") { hosts += 1 }
        if Self.named(name, length, "content-length") {
            contentLength = true
            if let value { declaredLength = Self.digits(value) }
        }
        if Self.named(name, length, "transfer-encoding"), let value {
            if transferEncoding != nil { transferEncoding!.append(UInt8(ascii: ",")) }
            transferEncoding = (transferEncoding ?? []) + UnsafeRawBufferPointer(start: value, count: valueLength)
        }
        return (length, valueLength)
    }

    /// The problem with the head noted so far, of HTTP `version`; nil when there is none.
    public func problem(version: UnsafePointer<CChar>?) -> Problem? {
        if badName { return Problem(status: 400, message: "a header name holds whitespace (or there is whitespace before its colon)") }
        if badByte { return Problem(status: 400, message: "a NUL or a bare CR in the request head") }
        if let version, strcmp(version, "HTTP/1.1") == 0, hosts != 1 {
            return Problem(status: 400, message: hosts == 0 ? "an HTTP/1.1 request needs a Host header" : "more than one Host header")
        }
        if hosts > 1 { return Problem(status: 400, message: "more than one Host header") }
        guard let transferEncoding else { return nil }
        if contentLength { return Problem(status: 400, message: "Transfer-Encoding and Content-Length together") }
        let codings = transferEncoding.split(separator: UInt8(ascii: ","))
            .map { String(decoding: $0, as: UTF8.self).trimmingWhitespace().asciiLowercased() }
            .filter { !$0.isEmpty }
        if codings.filter({ $0 == "chunked" }).count > 1 || (codings.contains("chunked") && codings.last != "chunked") {
            return Problem(status: 400, message: "chunked must be the last transfer coding, and only once")
        }
        if let unknown = codings.first(where: { $0 != "chunked" }) {
            return Problem(status: 501, message: "transfer coding \"\(unknown.prefix(40))\" is not supported")
        }
        return nil
    }

    /// Whether the body comes in chunks (the head passed `problem`, so `chunked` is its one coding).
    var isChunked: Bool { transferEncoding != nil }

    /// The number the value's digits spell (saturating at `Int.max`), skipping
    /// anything else: the value was checked before this is read (`HeadParser`).
    private static func digits(_ value: UnsafePointer<CChar>) -> Int {
        var number = 0
        var index = 0
        while value[index] != 0 {
            let byte = UInt8(bitPattern: value[index])
            if byte >= 0x30, byte <= 0x39 {
                let (times, overflow) = number.multipliedReportingOverflow(by: 10)
                let (sum, overflowAgain) = times.addingReportingOverflow(Int(byte - 0x30))
                number = overflow || overflowAgain ? .max : sum
            }
            index += 1
        }
        return number
    }

    /// Whether the `length` bytes at `name` are `lowercase`, ignoring ASCII case.
    static func named(_ name: UnsafePointer<CChar>, _ length: Int, _ lowercase: StaticString) -> Bool {
        length == lowercase.utf8CodeUnitCount
            && RequestFields.equalIgnoringCase(name, UnsafeRawBufferPointer(start: lowercase.utf8Start, count: length))
    }
}

/// A request head's lines as one walk over them reads them: `head` notes each
/// for the rules, and `fields` holds the request's fields, unless the lines are
/// more than the server takes (`keepsFields` false: the answer is a 431).
struct HeadLines {
    var head = RequestHead()
    let keepsFields: Bool
    var fields = RequestFields()

    init(keepsFields: Bool) {
        self.keepsFields = keepsFields
    }
}

extension StringProtocol {
    fileprivate func trimmingWhitespace() -> String {
        let bytes = Array(utf8)
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }

    /// Lowercased by ASCII's rules only, as libmicrohttpd compares codings:
    /// Unicode's would read "chunked" with a Kelvin sign (U+212A) for its k as
    /// "chunked", and the request would wait for a body nobody frames.
    fileprivate func asciiLowercased() -> String {
        String(decoding: utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
