/// The validators and type of the last response a transfer received, taken
/// line by line from libcurl's header callback.
///
/// libcurl hands over the headers of every response in a redirect chain (and
/// of any `1xx` interim response), one line at a time: the status line, each
/// header, then an empty line. Each status line starts a new response, so
/// everything kept so far is dropped there; what is left at the end belongs to
/// the final response.
struct ResponseHeaders {
    /// `ETag`, as sent.
    private(set) var etag: String?
    /// `Last-Modified`, as sent.
    private(set) var lastModified: String?
    /// `Content-Type`, as sent.
    private(set) var contentType: String?

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
        }
    }

    /// The value without surrounding blanks and the line end; `nil` when empty.
    /// Bytes that are not UTF-8 (obsolete, but allowed) become U+FFFD.
    private static func text(_ value: Slice<UnsafeRawBufferPointer>) -> String? {
        let isBlank = { (byte: UInt8) in byte == 32 || byte == 9 || byte == 13 || byte == 10 }
        guard let first = value.firstIndex(where: { !isBlank($0) }),
              let last = value.lastIndex(where: { !isBlank($0) }) else { return nil }
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
