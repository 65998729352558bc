import CCurl

/// The extra headers of one request, checked, as libcurl's `curl_slist` of
/// `Name: value` lines.
///
/// A name must be an HTTP token and no name or value may hold CR, LF or NUL:
/// a value taken from a feed's stored validators (or anywhere else) must not
/// be able to add headers of its own, or end the request head early.
enum RequestHeaders {
    /// The header lines for `headers` followed by the validators of
    /// `conditional`, or `.invalidHeader` when one of them is refused.
    static func lines(_ headers: [(String, String)], conditional: ConditionalRequest) throws(FetchError) -> [String] {
        var all = headers
        if let etag = conditional.etag { all.append(("If-None-Match", etag)) }
        if let lastModified = conditional.lastModified { all.append(("If-Modified-Since", lastModified)) }
        var lines: [String] = []
        for (name, value) in all {
            guard isToken(name), isFieldValue(value) else { throw .invalidHeader }
            let trimmed = value.trimmingSpaces
            // libcurl reads "Name:" with nothing after the colon as "remove this
            // header"; "Name;" is how it is told to send one that is empty.
            lines.append(trimmed.isEmpty ? "\(name);" : "\(name): \(trimmed)")
        }
        return lines
    }

    /// Builds libcurl's list from `lines`; the caller frees it with
    /// `curl_slist_free_all` once the easy handle is cleaned up. `nil` for no
    /// lines, and also when libcurl runs out of memory (checked by the caller).
    static func list(_ lines: [String]) -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            // curl_slist_append copies the string; on failure the list so far is kept and returned nil.
            guard let longer = line.withCString({ curl_slist_append(list, $0) }) else {
                curl_slist_free_all(list)
                return nil
            }
            list = longer
        }
        return list
    }

    /// RFC 9110 §5.6.2: one or more of ALPHA, DIGIT and ``!#$%&'*+-.^_`|~``.
    static func isToken(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }
    }

    /// Whether `value` holds no CR, LF or NUL.
    static func isFieldValue(_ value: String) -> Bool {
        !value.utf8.contains { $0 == 13 || $0 == 10 || $0 == 0 }
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: String {
        let bytes = Array(utf8)
        let isBlank = { (byte: UInt8) in byte == 32 || byte == 9 }
        guard let first = bytes.firstIndex(where: { !isBlank($0) }),
              let last = bytes.lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
