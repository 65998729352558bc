/// The validators, type and freshness headers of the last response a
/// transfer received, taken line by line from libcurl's header callback.
///
/// libcurl hands over the headers of every response in a redirect chain (and
/// of any `1xx` interim response), one line at a time: the status line, each
/// header, then an empty line. Each status line starts a new response, so
/// everything kept so far is dropped there; what is left at the end belongs to
/// the final response.
struct ResponseHeaders: Sendable {
    /// `ETag`, as sent.
    private(set) var etag: String?
    /// `Last-Modified`, as sent.
    private(set) var lastModified: String?
    /// `Content-Type`, as sent.
    private(set) var contentType: String?
    /// The headers ``ResponseFreshness`` is read from, as sent.
    private(set) var cacheControl = JoinedField()
    private(set) var expires = JoinedField()
    private(set) var date = JoinedField()
    private(set) var age = JoinedField()
    private(set) var retryAfter = JoinedField()

    /// What the freshness headers say; `now` (seconds since 1970) only
    /// places RFC 850 dates' two-digit years.
    func freshness(now: Int64) -> ResponseFreshness {
        ResponseFreshness(
            cacheControl: cacheControl.value, expires: expires.value, date: date.value, age: age.value,
            retryAfter: retryAfter.value, now: now)
    }

    /// Takes one header line, CRLF included.
    mutating func take(_ line: UnsafeRawBufferPointer) {
        if line.starts(with: "HTTP/".utf8) {
            self = ResponseHeaders()
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        let name = line[..<colon]
        let value = line[(colon + 1)...]
        if name.matches("etag") {
            etag = Self.text(value)
        } else if name.matches("last-modified") {
            lastModified = Self.text(value)
        } else if name.matches("content-type") {
            contentType = Self.text(value)
        } else if name.matches("cache-control") {
            cacheControl.add(Self.text(value))
        } else if name.matches("expires") {
            expires.add(Self.text(value))
        } else if name.matches("date") {
            date.add(Self.text(value))
        } else if name.matches("age") {
            age.add(Self.text(value))
        } else if name.matches("retry-after") {
            retryAfter.add(Self.text(value))
        }
    }

    /// The value without surrounding blanks and the line end; `nil` when empty.
    /// Bytes that are not UTF-8 (obsolete, but allowed) become U+FFFD.
    private static func text(_ value: Slice<UnsafeRawBufferPointer>) -> String? {
        let isBlank = { (byte: UInt8) in byte == 32 || byte == 9 || byte == 13 || byte == 10 }
        guard let first = value.firstIndex(where: { !isBlank($0) }),
            let last = value.lastIndex(where: { !isBlank($0) })
        else { return nil }
        return String(decoding: value[first...last], as: UTF8.self)
    }
}

extension Slice<UnsafeRawBufferPointer> {
    /// Whether these bytes spell `lowercaseName`, ignoring ASCII case (header names are case-insensitive).
    fileprivate func matches(_ lowercaseName: String) -> Bool {
        count == lowercaseName.utf8.count
            && zip(self, lowercaseName.utf8).allSatisfy { byte, expected in
                (byte >= 65 && byte <= 90 ? byte + 32 : byte) == expected
            }
    }
}

/// A header that may come on several lines, kept as one value: the lines
/// joined with ", " (RFC 9110 §5.3), so that a list (`Cache-Control`) reads
/// whole and a header that may be sent once (`Expires`, `Date`, `Age`,
/// `Retry-After`) sent twice reads as no valid value, whichever was meant.
///
/// At most ``maxBytes``: past that the value is `""` for good, which no
/// reading accepts, so an origin cannot make a transfer hold more of it or
/// hide a directive in a long line.
struct JoinedField: Sendable {
    /// The longest value kept, in bytes: far more than any honest use of
    /// these headers needs (an HTTP-date has 29 bytes).
    static let maxBytes = 1024

    /// Nil when the header was not sent; `""` when it was sent empty, or too long.
    private(set) var value: String?
    private var tooLong = false

    /// Takes one line's value (nil when it was empty).
    mutating func add(_ line: String?) {
        guard !tooLong else { return }
        let line = line ?? ""
        let joined = value.map { $0 + ", " + line } ?? line
        if joined.utf8.count > Self.maxBytes {
            tooLong = true
            value = ""
        } else {
            value = joined
        }
    }
}
