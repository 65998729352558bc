import Foundation

/// What the operator's views and the logs may show of a source's address,
/// and the host it is polled under.
public enum SourceURL {
    /// `url` with its credentials hidden: a user and password become `***@`,
    /// and the values of query keys that look like secrets (token, key,
    /// secret, pass, auth, sig) become `***`. A path is shown as it is.
    public static func redacted(_ url: String) -> String {
        guard var parts = URLComponents(string: url), parts.scheme != nil else { return url }
        if parts.user != nil || parts.password != nil {
            parts.user = "***"
            parts.password = nil
        }
        if let items = parts.queryItems, !items.isEmpty {
            parts.queryItems = items.map { item in
                let name = item.name.lowercased()
                let secret = ["token", "key", "secret", "pass", "auth", "sig"].contains { name.contains($0) }
                return secret ? URLQueryItem(name: item.name, value: "***") : item
            }
        }
        return (parts.string ?? url).replacingOccurrences(of: "%2A%2A%2A", with: "***")
    }

    /// The host a source is polled under: `host:port` of a URL, lowercased
    /// (the default port written out); a path is its own.
    public static func host(of source: ImportSource) -> String {
        switch source {
        case .url(let url):
            guard let parts = URLComponents(string: url), let host = parts.host?.lowercased() else { return url }
            let port = parts.port ?? (parts.scheme?.lowercased() == "https" ? 443 : 80)
            return "\(host):\(port)"
        case .file(let path), .folder(let path): return "file:" + path
        }
    }
}
