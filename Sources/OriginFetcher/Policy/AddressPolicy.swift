import Foundation

/// Where a fetch may connect: anywhere, or only to public addresses and the
/// networks and hosts allowed besides.
///
/// It is enforced on the address libcurl is about to connect to, in the
/// open-socket callback, for the first hop and every redirect, IPv4 and IPv6,
/// whatever the name resolved to at that moment (no window between a check
/// and the connect for DNS to answer otherwise); and again before every
/// request is sent, on the connection it goes out on, so a kept-alive
/// connection made under another policy is not a way around it. A refused
/// fetch ends with `FetchError.addressRefused` and no byte is sent. Proxies
/// are off for a restricted fetch (`http_proxy` and the like included): the
/// policy judges the origin, not a proxy in between.
public struct AddressPolicy: Sendable, Hashable {
    /// Whether the special addresses (`SpecialAddresses`) are refused.
    public let publicOnly: Bool
    /// What the operator allowed besides public addresses.
    public let allowances: [OriginAllowance]

    /// Any address: for URLs the caller trusts (the operator's own sources,
    /// the server's own peers). The library's default.
    public static let anywhere = AddressPolicy(publicOnly: false, allowances: [])

    /// Public addresses only: for URLs someone else wrote (a feed's images).
    public static let publicOnly = AddressPolicy(publicOnly: true, allowances: [])

    /// Public addresses, and those `allowances` name.
    public static func publicOnly(allowing allowances: [OriginAllowance]) -> AddressPolicy {
        AddressPolicy(publicOnly: true, allowances: allowances)
    }

    private init(publicOnly: Bool, allowances: [OriginAllowance]) {
        self.publicOnly = publicOnly
        self.allowances = allowances
    }

    /// Whether some allowance names a host (so the hop's host must be known to judge).
    var namesHosts: Bool { allowances.contains { $0.hostName != nil } }

    /// Whether a connection to `address` on `port` may be made, for a URL whose
    /// host is `host` (asked only when an allowance names a host: it costs a parse).
    public func admits(_ address: IPAddress, port: Int, host: () -> String?) -> Bool {
        guard publicOnly, SpecialAddresses.reason(for: address) != nil else { return true }
        let unmapped = address.unmapped
        if allowances.contains(where: { $0.network != nil && $0.admits(unmapped, port: port, hostName: nil) }) { return true }
        guard namesHosts, let hostName = host().map(OriginAllowance.normalized) else { return false }
        return allowances.contains { $0.hostName != nil && $0.admits(unmapped, port: port, hostName: hostName) }
    }
}

/// A network or a host the operator allows origins on, besides public
/// addresses (`--allow-origin`): `10.0.0.0/8`, `fd00::/8`, `192.168.1.20`,
/// `[::1]:8080`, `images.internal`, `images.internal:8443`. A host name
/// allows whatever it resolves to, for URLs that name it (a redirect to
/// another host is judged on its own); a port limits it to that port.
public struct OriginAllowance: Sendable, Hashable, CustomStringConvertible {
    /// The network allowed, for an address or CIDR allowance.
    public let network: IPNetwork?
    /// The host name allowed (lower-cased, no trailing dot), for a name allowance.
    public let hostName: String?
    /// The only port allowed, when one was named.
    public let port: Int?

    /// Reads `HOST[:PORT]`, `ADDRESS[:PORT]` (an IPv6 one in brackets when a
    /// port follows) or `ADDRESS/PREFIX`; nil when it is none of them.
    public init?(_ text: String) {
        let text = text.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty, !text.contains(where: { $0.isWhitespace }) else { return nil }
        var port: Int?
        var hostPart = Substring(text)
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let parsed = Self.port(rest.dropFirst()) else { return nil }
                port = parsed
            }
            hostPart = text[text.index(after: text.startIndex)..<close]
            guard IPAddress(String(hostPart)) != nil else { return nil }
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            guard let parsed = Self.port(text[text.index(after: colon)...]) else { return nil }
            port = parsed
            hostPart = text[..<colon]
        }
        if let network = IPNetwork(String(hostPart)) {
            // A port goes with a single address, not a CIDR block.
            guard port == nil || !hostPart.contains("/") else { return nil }
            self.network = network
            hostName = nil
        } else {
            let name = Self.normalized(String(hostPart))
            let allowed = name.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            }
            // All digits and dots is an IPv4 address written some other way (`127.1`): not a name.
            guard !name.isEmpty, allowed, !name.hasPrefix("."), !name.utf8.allSatisfy({ $0 == UInt8(ascii: ".") || (48...57).contains($0) })
            else { return nil }
            network = nil
            hostName = name
        }
        self.port = port
    }

    /// As written back: `10.0.0.0/8`, `[::1]:8080`, `images.internal:8443`.
    public var description: String {
        var text: String
        if let network {
            let single = network.prefixLength == network.address.bitWidth
            text = single ? "\(network.address)" : "\(network)"
            if port != nil, case .v6 = network.address { text = "[\(text)]" }
        } else {
            text = hostName ?? ""
        }
        return port.map { "\(text):\($0)" } ?? text
    }

    func admits(_ address: IPAddress, port: Int, hostName host: String?) -> Bool {
        if let wanted = self.port, wanted != port { return false }
        if let network { return network.contains(address) }
        return hostName != nil && hostName == host
    }

    /// A host as allowances compare it: lower-cased, without a trailing dot.
    static func normalized(_ host: String) -> String {
        let lower = host.lowercased()
        return lower.hasSuffix(".") ? String(lower.dropLast()) : lower
    }

    private static func port(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 5, text.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(text), (1...65535).contains(value)
        else { return nil }
        return value
    }
}
