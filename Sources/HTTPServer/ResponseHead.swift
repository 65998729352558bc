import HTTPTypes

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An answer's head as the event loop writes it: the status line and the
/// response's own lines, made once for a kept response (`PreparedResponse`),
/// then the lines each answer adds (`Date`, `Content-Length`, `Connection`).
enum ResponseHead {
    /// The status line and header lines of `response`, each ended with CRLF,
    /// `X-Content-Type-Options: nosniff` last; not the empty line.
    static func statusAndFields(of response: Response, into bytes: inout [UInt8]) {
        append("HTTP/1.1 ", to: &bytes)
        append(number: response.status.code, to: &bytes)
        bytes.append(0x20)
        let phrase = response.status.reasonPhrase
        append(phrase.isEmpty ? reason(for: response.status.code) : phrase, to: &bytes)
        bytes.append(contentsOf: crlf)
        for field in response.headers {
            append(field.name.rawName, to: &bytes)
            bytes.append(0x3A)
            bytes.append(0x20)
            // HTTPField has already turned CR, LF and NUL in values into spaces.
            field.withUnsafeBytesOfValue { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: crlf)
        }
        append("X-Content-Type-Options: nosniff\r\n", to: &bytes)
    }

    /// RFC 9110's reason phrase for `code`, for a status made from a number
    /// alone (`.plain(413, …)`), which carries none; "Unknown" past the list.
    static func reason(for code: Int) -> String {
        switch code {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 417: "Expectation Failed"
        case 421: "Misdirected Request"
        case 422: "Unprocessable Content"
        case 426: "Upgrade Required"
        case 428: "Precondition Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Unknown"
        }
    }

    /// Whether an answer of `status` carries no body and no `Content-Length` (RFC 9110 §8.6).
    static func isBodiless(_ status: Int) -> Bool {
        status == 204 || status == 304 || (100..<200).contains(status)
    }

    /// The lines each answer ends its head with, and the empty line.
    static func appendClosingLines(bodyCount: Int, status: Int, connection: ConnectionLine, date: [UInt8], to bytes: inout [UInt8]) {
        bytes.append(contentsOf: date)
        if !isBodiless(status) {
            append("Content-Length: ", to: &bytes)
            append(number: bodyCount, to: &bytes)
            bytes.append(contentsOf: crlf)
        }
        switch connection {
        case .none: break
        case .close: append("Connection: close\r\n", to: &bytes)
        case .keepAlive: append("Connection: keep-alive\r\n", to: &bytes)
        }
        bytes.append(contentsOf: crlf)
    }

    /// The `Connection` line an answer carries.
    enum ConnectionLine {
        /// None: an HTTP/1.1 connection that stays open.
        case none
        case close
        /// An HTTP/1.0 connection that asked to stay open, and does.
        case keepAlive
    }

    private static let crlf: [UInt8] = [0x0D, 0x0A]

    static func append(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    static func append(number: Int, to bytes: inout [UInt8]) {
        var value = max(0, number)
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var index = buffer.count
            repeat {
                index -= 1
                buffer[index] = UInt8(0x30 + value % 10)
                value /= 10
            } while value > 0
            bytes.append(contentsOf: buffer[index...])
        }
    }
}

/// The `Date:` line of the current second, made again only when the second
/// changes; one per event-loop thread, so no thread shares it.
struct DateLine {
    private var second = -1
    private(set) var line: [UInt8] = []

    /// The line for now (IMF-fixdate, RFC 9110 §5.6.7), with its CRLF.
    mutating func now() -> [UInt8] {
        let current = time(nil)
        if current != second {
            second = current
            var parts = tm()
            var seconds = current
            // CDateLine's gmtime_r takes no lock (see HTTPServer.start).
            gmtime_r(&seconds, &parts)
            var text = [CChar](repeating: 0, count: 64)
            let count = strftime(&text, text.count, "Date: %a, %d %b %Y %H:%M:%S GMT\r\n", &parts)
            line = text[..<count].map { UInt8(bitPattern: $0) }
        }
        return line
    }
}
