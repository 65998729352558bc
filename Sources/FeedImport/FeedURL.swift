import Foundation

/// URLs from a source, resolved and checked before anything keeps them.
///
/// Only `http` and `https` leave here (and `file` for the images of a folder
/// import): a `javascript:`, `data:` or `file:` URL in a feed never reaches a
/// page or the fetcher.
public enum FeedURL {
    /// `raw` resolved against `base` (then `fallbackBase`), or nil when it is
    /// empty, unparsable, or of a scheme not allowed.
    public static func resolve(_ raw: String?, base: String?, fallbackBase: String? = nil, allowFile: Bool = false) -> String? {
        guard let raw else { return nil }
        let trimmed = raw.trimmingFeedSpace()
        guard !trimmed.isEmpty, trimmed.utf8.count <= 4096, !trimmed.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            return nil
        }
        let url: URL
        if let absolute = URL(string: trimmed), absolute.scheme != nil {
            // Most feed URLs are absolute: no base to parse.
            url = absolute
        } else {
            let baseURL = [base, fallbackBase].lazy.compactMap { $0 }.compactMap { absoluteBase($0) }.first
            guard let resolved = URL(string: trimmed, relativeTo: baseURL) ?? percentEncoded(trimmed, relativeTo: baseURL) else {
                return nil
            }
            url = resolved
        }
        let absolute = url.absoluteURL
        guard let scheme = absolute.scheme?.lowercased() else { return nil }
        switch scheme {
        case "http", "https":
            guard let host = absolute.host, !host.isEmpty else { return nil }
            return absolute.absoluteString
        case "file":
            return allowFile ? absolute.absoluteString : nil
        default:
            return nil
        }
    }

    /// `base` as a URL to resolve against, when it is itself absolute http(s).
    private static func absoluteBase(_ base: String) -> URL? {
        let trimmed = base.trimmingFeedSpace()
        guard let url = URL(string: trimmed), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https" || scheme == "file"
        else { return nil }
        return url
    }

    /// Feeds often carry spaces or non-ASCII in URLs; browsers encode them, so do we.
    private static func percentEncoded(_ raw: String, relativeTo base: URL?) -> URL? {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.insert(charactersIn: "#%")
        guard let encoded = raw.addingPercentEncoding(withAllowedCharacters: allowed) else { return nil }
        return URL(string: encoded, relativeTo: base)
    }
}
