import CCurl

/// The check a URL passes before any transfer starts: it must parse, and its
/// scheme must be one the fetch allows. libcurl's own protocol lists enforce
/// the same rule again inside the transfer (and on every redirect); checking
/// here first gives a precise error without touching the network.
enum OriginURL {
    /// Why `url` may not be fetched, or `nil` when it may.
    static func refusal(for url: String, allowFileScheme: Bool) -> FetchError? {
        guard !url.isEmpty, !url.utf8.contains(0) else { return .invalidURL }
        guard let scheme = scheme(of: url) else { return .invalidURL }
        switch scheme {
        case "http", "https": return nil
        case "file": return allowFileScheme ? nil : .schemeNotAllowed
        default: return .schemeNotAllowed
        }
    }

    /// The origin `url` names, as the fetch queue groups fetches: scheme, host
    /// and port as written, lower-cased (`http://img.example:8080`). Cheap: it
    /// runs on every fetch, so it reads the bytes, not libcurl's parser.
    static func host(of url: String) -> String {
        let bytes = url.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return url.lowercased() }
        var start = bytes.index(after: colon)
        for _ in 0..<2 where start < bytes.endIndex && bytes[start] == UInt8(ascii: "/") { start = bytes.index(after: start) }
        let end = bytes[start...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
        return String(decoding: bytes[..<end], as: UTF8.self).lowercased()
    }

    /// The host `url` names, lower-cased, as libcurl's URL parser reads it
    /// (an IPv4 address in its dotted form whatever way it was written; an
    /// IPv6 one in brackets), or nil when it has none.
    static func hostName(of url: String) -> String? {
        CurlGlobal.ensureInitialized()
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        guard url.withCString({ curl_url_set(handle, CURLUPART_URL, $0, 0) }) == CURLUE_OK else { return nil }
        var part: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, CURLUPART_HOST, &part, 0) == CURLUE_OK, let part else { return nil }
        defer { curl_free(part) }
        return String(cString: part).lowercased()
    }

    /// The lower-cased scheme of `url` as libcurl's URL parser reads it, or
    /// `nil` when libcurl cannot parse it. Schemes this libcurl was built
    /// without still parse, so that they are refused as schemes, not as URLs.
    static func scheme(of url: String) -> String? {
        CurlGlobal.ensureInitialized()
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        let parsed = url.withCString { curl_url_set(handle, CURLUPART_URL, $0, UInt32(CURLU_NON_SUPPORT_SCHEME)) }
        guard parsed == CURLUE_OK else { return nil }
        var part: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, CURLUPART_SCHEME, &part, 0) == CURLUE_OK, let part else { return nil }
        defer { curl_free(part) }
        return String(cString: part).lowercased()
    }
}

/// libcurl's process-wide initialisation, done once before the first handle.
enum CurlGlobal {
    /// A `static let` initialiser runs exactly once, under a lock, whatever the
    /// number of threads that reach it first.
    private static let initialized: Bool = wf_curl_global_init() == CURLE_OK

    /// Makes sure `curl_global_init` has run; `false` if it failed.
    @discardableResult
    static func ensureInitialized() -> Bool { initialized }
}
