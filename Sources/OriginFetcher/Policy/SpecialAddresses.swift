/// The addresses that are not somebody's public server: IANA's IPv4 and IPv6
/// special-purpose address registries (RFC 6890 and its updates), multicast,
/// and for IPv6 everything outside global unicast (`2000::/3`). A fetch whose
/// policy is `AddressPolicy.publicOnly` connects to none of them unless the
/// operator allowed it.
///
/// imgproxy and Miniflux refuse loopback, private, link-local and unspecified
/// addresses (Go's `IsLoopback`, `IsPrivate`, `IsLinkLocalUnicast`,
/// `IsUnspecified`, with IPv4-mapped IPv6 read as IPv4). This refuses those,
/// and also CGNAT, the IETF's own blocks, documentation and benchmarking
/// blocks, reserved and broadcast IPv4, IPv4-compatible and IPv4-mapped IPv6,
/// site-local, NAT64 for local use, discard-only, segment-routing SIDs, and
/// the IPv6 transition prefixes that carry an IPv4 address in them (6to4,
/// Teredo). The well-known NAT64 prefix (`64:ff9b::/96`, a host on an
/// IPv6-only network reaching IPv4 through DNS64) is judged by the IPv4
/// address it carries, so a public IPv4 origin stays reachable there.
public enum SpecialAddresses {
    /// A block and what it is, as IANA's registry names it.
    public struct Block: Sendable, Hashable {
        /// The addresses.
        public let network: IPNetwork
        /// What they are for ("loopback", "private", …).
        public let name: String

        init(_ cidr: String, _ name: String) {
            network = IPNetwork(cidr)!
            self.name = name
        }
    }

    /// The IPv4 blocks that are not public, in address order.
    public static let ipv4: [Block] = [
        Block("0.0.0.0/8", "this network (unspecified)"),
        Block("10.0.0.0/8", "private"),
        Block("100.64.0.0/10", "shared address space (CGNAT)"),
        Block("127.0.0.0/8", "loopback"),
        Block("169.254.0.0/16", "link-local"),
        Block("172.16.0.0/12", "private"),
        // Holds DS-Lite (192.0.0.0/29), NAT64 discovery (192.0.0.170/31) and the rest of RFC 6890's.
        Block("192.0.0.0/24", "IETF protocol assignments"),
        Block("192.0.2.0/24", "documentation (TEST-NET-1)"),
        Block("192.88.99.0/24", "6to4 relay anycast (deprecated)"),
        Block("192.168.0.0/16", "private"),
        Block("198.18.0.0/15", "benchmarking"),
        Block("198.51.100.0/24", "documentation (TEST-NET-2)"),
        Block("203.0.113.0/24", "documentation (TEST-NET-3)"),
        Block("224.0.0.0/4", "multicast"),
        // Holds the limited broadcast address, 255.255.255.255.
        Block("240.0.0.0/4", "reserved"),
    ]

    /// The IPv6 blocks that are not public, the narrower first where they nest.
    /// Anything outside `2000::/3` is refused as well (`ipv6GlobalUnicast`),
    /// but for `nat64`.
    public static let ipv6: [Block] = [
        Block("::/128", "unspecified"),
        Block("::1/128", "loopback"),
        Block("::ffff:0:0/96", "IPv4-mapped"),
        Block("::/96", "IPv4-compatible (deprecated)"),
        Block("64:ff9b:1::/48", "NAT64 for local use"),
        Block("100::/64", "discard-only"),
        // Teredo (2001::/32), benchmarking (2001:2::/48), ORCHID (2001:10::/28, 2001:20::/28) and the rest.
        Block("2001::/23", "IETF protocol assignments"),
        Block("2001:db8::/32", "documentation"),
        Block("2002::/16", "6to4"),
        Block("3fff::/20", "documentation"),
        Block("5f00::/16", "segment routing SIDs"),
        Block("fc00::/7", "unique-local"),
        Block("fe80::/10", "link-local"),
        Block("fec0::/10", "site-local (deprecated)"),
        Block("ff00::/8", "multicast"),
    ]

    /// Where IANA allocates public IPv6 addresses from.
    public static let ipv6GlobalUnicast = IPNetwork("2000::/3")!
    /// The well-known NAT64 prefix (RFC 6052): its last 32 bits are an IPv4 address.
    public static let nat64 = IPNetwork("64:ff9b::/96")!

    /// What `address` is when it is not a public address (the block's name),
    /// or nil when it is.
    public static func reason(for address: IPAddress) -> String? {
        switch address {
        case .v4:
            return ipv4.first { $0.network.contains(address) }?.name
        case .v6(let value):
            if nat64.contains(address) {
                return reason(for: .v4(UInt32(truncatingIfNeeded: value))).map { "NAT64 of \($0)" }
            }
            if let block = ipv6.first(where: { $0.network.contains(address) }) { return block.name }
            return ipv6GlobalUnicast.contains(address) ? nil : "not global unicast"
        }
    }
}
