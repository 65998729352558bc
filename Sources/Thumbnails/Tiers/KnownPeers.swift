import Synchronization

/// The nodes of a cluster this node may ask for a thumbnail (`--peer`, as
/// groupcache's pool is given its peers): an original's owner record in
/// Redis names one of them, or it is not believed. Whoever can write to
/// Redis could otherwise name any URL, and this node would fetch it.
///
/// Addresses are compared in one spelling (`canonical`): scheme and host in
/// lower case, the port always written, no path. The list may include this
/// node itself, so every node can be given the same one.
package final class KnownPeers: Sendable {
    private let peers: Mutex<Set<String>>

    /// The peers given; each must be `canonical` (the configuration checks it first).
    package init(_ urls: [String]) {
        peers = Mutex(Set(urls.compactMap(Self.canonical)))
    }

    /// Replaces the list (a cluster whose nodes learn their ports only once
    /// they listen, as tests do; groupcache's `HTTPPool.Set`).
    package func set(_ urls: [String]) {
        let canonical = Set(urls.compactMap(Self.canonical))
        peers.withLock { $0 = canonical }
    }

    /// Whether no peer is known: every owner record is then a stranger's.
    package var isEmpty: Bool { peers.withLock { $0.isEmpty } }

    /// The peer `url` names, in its canonical spelling (what this node asks),
    /// or nil when it is none of them.
    package func known(_ url: String) -> String? {
        guard let canonical = Self.canonical(url) else { return nil }
        return peers.withLock { $0.contains(canonical) } ? canonical : nil
    }

    /// `url` as `scheme://host:port`, or nil when it is not the address of a
    /// node: http or https, a host, an optional port, nothing after it but an
    /// optional `/` (no user, path, query or fragment).
    package static func canonical(_ url: String) -> String? {
        guard url.utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else { return nil }
        let lower = url.lowercased()
        let scheme: String
        if lower.hasPrefix("http://") {
            scheme = "http"
        } else if lower.hasPrefix("https://") {
            scheme = "https"
        } else {
            return nil
        }
        var rest = Substring(lower.dropFirst(scheme.count + 3))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.isEmpty, !rest.contains(where: { "/?#@\\".contains($0) }) else { return nil }
        let host: Substring
        var port: Substring?
        if rest.hasPrefix("[") {
            // An IPv6 literal: [address] then an optional :port.
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[...close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                port = after.dropFirst()
            }
        } else {
            let parts = rest.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { return nil }
            host = parts[0]
            port = parts.count == 2 ? parts[1] : nil
        }
        guard host.count > 0 else { return nil }
        let number: Int
        if let port {
            guard let given = Int(port), (1...65535).contains(given), port.allSatisfy(\.isNumber) else { return nil }
            number = given
        } else {
            number = scheme == "https" ? 443 : 80
        }
        return "\(scheme)://\(host):\(number)"
    }
}
