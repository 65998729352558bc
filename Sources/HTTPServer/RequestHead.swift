/// The checks RFC 9112 asks of a request head that libmicrohttpd 0.9.75 lets
/// through, made on the head's parsed lines before anything is answered: a
/// request that breaks one gets a clear 400 or 501 at once, never a guess, a
/// 200 for a request smuggled past a proxy, or a wait for a body that a
/// coding nobody here speaks would frame.
enum RequestHead {
    /// Why a head is refused.
    struct Problem: Equatable, Sendable {
        var status: Int
        var message: String
    }

    /// The problem with a head of HTTP `version` whose header lines are
    /// `fields` (names and values as sent), or nil when there is none.
    static func problem(version: String, fields: [(name: String, value: String)]) -> Problem? {
        var hosts = 0
        var contentLength = false
        var codings: [String] = []
        for (name, value) in fields {
            if name.isEmpty || name.utf8.contains(where: { $0 == 0x20 || $0 == 0x09 }) {
                return Problem(status: 400, message: "a header name holds whitespace (or there is whitespace before its colon)")
            }
            let forbidden = { (byte: UInt8) in byte == 0 || byte == 0x0d || byte == 0x0a }
            if name.utf8.contains(where: forbidden) || value.utf8.contains(where: forbidden) {
                return Problem(status: 400, message: "a NUL or a bare CR in the request head")
            }
            switch name.lowercased() {
            case "host": hosts += 1
            case "content-length": contentLength = true
            case "transfer-encoding":
                codings += value.split(separator: ",").map { $0.trimmingWhitespace().lowercased() }.filter { !$0.isEmpty }
            default: break
            }
        }
        if version == "HTTP/1.1", hosts != 1 {
            return Problem(status: 400, message: hosts == 0 ? "an HTTP/1.1 request needs a Host header" : "more than one Host header")
        }
        if hosts > 1 { return Problem(status: 400, message: "more than one Host header") }
        if !codings.isEmpty {
            if contentLength { return Problem(status: 400, message: "Transfer-Encoding and Content-Length together") }
            if codings.filter({ $0 == "chunked" }).count > 1 || (codings.contains("chunked") && codings.last != "chunked") {
                return Problem(status: 400, message: "chunked must be the last transfer coding, and only once")
            }
            if let unknown = codings.first(where: { $0 != "chunked" }) {
                return Problem(status: 501, message: "transfer coding \"\(unknown.prefix(40))\" is not supported")
            }
        }
        return nil
    }
}

extension StringProtocol {
    fileprivate func trimmingWhitespace() -> String {
        let bytes = Array(utf8)
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
