#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A request head as the server's own event loop reads it: found in the
/// connection's buffer, checked as RFC 9112 asks, its lines noted for
/// `RequestHead`'s rules and kept as the request's `RequestFields`.
///
/// The buffer is the connection's own, so each name and value is ended with
/// a NUL in place (over its colon, and over the white space or line end
/// after the value) and handed on as the C strings `RequestHead` and
/// `RequestFields` read, without a copy.
struct ParsedHead {
    enum Version: Equatable {
        case http10, http11
    }

    /// The method as sent (a token).
    var method: String
    /// The request target as sent.
    var target: String
    var version: Version
    /// The lines: their rules' notes and the fields.
    var lines: HeadLines
    /// Whether the connection ends after this answer (`Connection: close`, or
    /// HTTP/1.0 without `Connection: keep-alive`).
    var closes: Bool
    /// Whether the client waits for `100 Continue` before it sends its body.
    var expectsContinue: Bool

    var isHead: Bool { method == "HEAD" }

    /// The version as the C string `RequestHead.problem` reads.
    var versionText: StaticString { version == .http11 ? "HTTP/1.1" : "HTTP/1.0" }
}

enum HeadParser {
    /// Where the head that starts at `bytes` ends (the index just past its
    /// empty line), looking from `from` on; nil while it has not all arrived.
    /// A line may end with CRLF or a bare LF (RFC 9112 §2.2).
    static func end(of bytes: UnsafePointer<UInt8>, count: Int, from: Int) -> Int? {
        var index = max(0, from)
        while index < count {
            guard let found = memchr(bytes + index, 0x0A, count - index) else { return nil }
            let newline = UnsafeRawPointer(found) - UnsafeRawPointer(bytes)
            if newline + 1 < count, bytes[newline + 1] == 0x0A { return newline + 2 }
            if newline + 2 < count, bytes[newline + 1] == 0x0D, bytes[newline + 2] == 0x0A { return newline + 3 }
            if newline + 2 >= count { return nil }
            index = newline + 1
        }
        return nil
    }

    /// Reads and judges the head in `head[0..<length]` (which `end(of:)` found
    /// whole): its own rules, then `RequestHead`'s (as libmicrohttpd answered a
    /// line the rules refuse first), then too many lines.
    static func check(_ head: UnsafeMutablePointer<UInt8>, length: Int, maxHeaderCount: Int) -> Result<ParsedHead, HTTPProblem> {
        let parsed: ParsedHead
        switch parse(head, length: length, maxHeaderCount: maxHeaderCount) {
        case .failure(let problem): return .failure(problem)
        case .success(let head): parsed = head
        }
        if let problem = parsed.lines.head.problem(version: UnsafeRawPointer(parsed.versionText.utf8Start).assumingMemoryBound(to: CChar.self)) {
            return .failure(problem)
        }
        guard parsed.lines.keepsFields else { return .failure(HTTPProblem(status: 431, message: "too many header lines: at most \(maxHeaderCount)")) }
        return .success(parsed)
    }

    /// Reads the head in `head[0..<length]` (which `end(of:)` found whole).
    private static func parse(_ head: UnsafeMutablePointer<UInt8>, length: Int, maxHeaderCount: Int) -> Result<ParsedHead, HTTPProblem> {
        if memchr(head, 0, length) != nil { return .failure(HTTPProblem(status: 400, message: "a NUL in the request head")) }
        // The request line.
        guard let lineEnd = lineEnd(head, from: 0, length: length) else { return .failure(badLine) }
        let line = UnsafeBufferPointer(start: head, count: lineEnd.content)
        guard let firstSpace = line.firstIndex(of: 0x20), firstSpace > 0, line[..<firstSpace].allSatisfy(FirstLook.isTokenByte) else {
            return .failure(badLine)
        }
        let targetStart = firstSpace + 1
        guard let secondSpace = line[targetStart...].firstIndex(of: 0x20), secondSpace > targetStart else { return .failure(badLine) }
        let versionBytes = line[(secondSpace + 1)...]
        let version: ParsedHead.Version
        if versionBytes.elementsEqual("HTTP/1.1".utf8) {
            version = .http11
        } else if versionBytes.elementsEqual("HTTP/1.0".utf8) {
            version = .http10
        } else if versionBytes.count == 8, versionBytes.starts(with: "HTTP/".utf8) {
            return .failure(HTTPProblem(status: 505, message: "HTTP version not supported: HTTP/1.1 and HTTP/1.0 only"))
        } else {
            return .failure(badLine)
        }
        if line.contains(0x0D) { return .failure(HTTPProblem(status: 400, message: "a NUL or a bare CR in the request head")) }
        let method = String(decoding: line[..<firstSpace], as: UTF8.self)
        let target = String(decoding: line[targetStart..<secondSpace], as: UTF8.self)

        // The header lines, up to the empty one.
        var count = 0
        var scan = lineEnd.next
        while let end = Self.lineEnd(head, from: scan, length: length), end.content > scan {
            count += 1
            scan = end.next
        }
        var lines = HeadLines(keepsFields: count <= maxHeaderCount)
        if lines.keepsFields { lines.fields.reserve(lines: count, bytes: 960) }
        var closes = version == .http10
        var expectsContinue = false
        var contentLengths = 0
        var start = lineEnd.next
        while let end = Self.lineEnd(head, from: start, length: length), end.content > start {
            let first = head[start]
            if first == 0x20 || first == 0x09 {
                return .failure(HTTPProblem(status: 400, message: "obsolete line folding in the request head"))
            }
            guard let colonPointer = memchr(head + start, 0x3A, end.content - start) else {
                return .failure(HTTPProblem(status: 400, message: "a header line without a colon"))
            }
            let colon = UnsafeRawPointer(colonPointer) - UnsafeRawPointer(head)
            var valueStart = colon + 1
            while valueStart < end.content, head[valueStart] == 0x20 || head[valueStart] == 0x09 { valueStart += 1 }
            var valueEnd = end.content
            while valueEnd > valueStart, head[valueEnd - 1] == 0x20 || head[valueEnd - 1] == 0x09 { valueEnd -= 1 }
            head[colon] = 0
            head[valueEnd] = 0
            let name = UnsafeRawPointer(head + start).assumingMemoryBound(to: CChar.self)
            let value = UnsafeRawPointer(head + valueStart).assumingMemoryBound(to: CChar.self)
            let noted = lines.head.note(name: name, value: value)
            if lines.keepsFields {
                lines.fields.append(name: name, nameCount: noted.name, value: value, valueCount: noted.value)
            }
            if RequestHead.named(name, noted.name, "content-length") {
                // As `FirstLook` judges a connection's first head, for every head:
                // one line, of digits only (else a body's length is a guess a proxy may not share).
                contentLengths += 1
                if contentLengths > 1 { return .failure(HTTPProblem(status: 400, message: "more than one Content-Length")) }
                let digits = UnsafeBufferPointer(start: head + valueStart, count: valueEnd - valueStart)
                guard !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                    return .failure(HTTPProblem(status: 400, message: "Content-Length must be one number, of digits only"))
                }
                if digits.count > 18 { return .failure(HTTPProblem(status: 413, message: "the request body is far too large")) }
            } else if RequestHead.named(name, noted.name, "connection") {
                let tokens = UnsafeBufferPointer(start: head + valueStart, count: valueEnd - valueStart)
                if hasToken(tokens, "close") { closes = true } else if hasToken(tokens, "keep-alive") { closes = false }
            } else if RequestHead.named(name, noted.name, "expect") {
                expectsContinue = strcasecmp(value, "100-continue") == 0
            }
            start = end.next
        }
        return .success(
            ParsedHead(method: method, target: target, version: version, lines: lines, closes: closes, expectsContinue: expectsContinue))
    }

    private static let badLine = HTTPProblem(status: 400, message: "a request line must be: a method, one space, a target, one space, HTTP/1.1")

    /// The line that starts at `from`: where its content ends (before CRLF or
    /// LF) and where the next line starts; nil when there is no line end.
    private static func lineEnd(_ head: UnsafeMutablePointer<UInt8>, from: Int, length: Int) -> (content: Int, next: Int)? {
        guard from < length, let found = memchr(head + from, 0x0A, length - from) else { return nil }
        let newline = UnsafeRawPointer(found) - UnsafeRawPointer(head)
        let content = newline > from && head[newline - 1] == 0x0D ? newline - 1 : newline
        return (content, newline + 1)
    }

    /// Whether the comma-separated `list` holds `token`, ignoring ASCII case.
    static func hasToken(_ list: UnsafeBufferPointer<UInt8>, _ token: StaticString) -> Bool {
        for piece in list.split(separator: 0x2C) {
            var slice = piece[...]
            while let first = slice.first, first == 0x20 || first == 0x09 { slice = slice.dropFirst() }
            while let last = slice.last, last == 0x20 || last == 0x09 { slice = slice.dropLast() }
            guard slice.count == token.utf8CodeUnitCount else { continue }
            let wanted = UnsafeBufferPointer(start: token.utf8Start, count: token.utf8CodeUnitCount)
            if zip(slice, wanted).allSatisfy({ $0 | 0x20 == $1 | 0x20 }) { return true }
        }
        return false
    }
}
