import Glibc
import HTTPServer

/// The proxies whose `X-Forwarded-For` is believed (`--trusted-proxy`), and
/// the client address a request is counted against.
///
/// Behind nginx every request comes from nginx's own address: counted by
/// that, one guesser would slow every operator behind the same nginx. So a
/// request whose connection comes from a trusted proxy is counted against the
/// address that proxy names: `X-Forwarded-For` read from the right (nginx's
/// `$proxy_add_x_forwarded_for` appends the address it saw), skipping
/// proxies that are themselves trusted; the first other address is the
/// client's. Anything to its left was written by the client and is never
/// read. A connection from any other address is counted against that
/// address, whatever headers it sends. None is trusted unless named.
/// (`X-Real-IP` is not read: one header, one rule.)
package struct TrustedProxies: Sendable, Equatable {
    /// One network: an IPv4 address and how many leading bits of it count.
    struct Network: Sendable, Equatable {
        var base: UInt32
        var mask: UInt32

        func contains(_ address: UInt32) -> Bool { address & mask == base }
    }

    /// A network that does not parse, with what `--trusted-proxy` takes.
    package struct Refused: Error, CustomStringConvertible {
        /// What is wrong, naming the option.
        package var description: String
    }

    let networks: [Network]

    /// No proxy trusted: every request is counted against its connection's address.
    package static let none = TrustedProxies(networks: [])

    init(networks: [Network]) {
        self.networks = networks
    }

    /// The networks `specs` name: `10.0.0.5` or `172.16.0.0/12` (IPv4, as the server listens).
    package init(_ specs: [String]) throws(Refused) {
        var networks: [Network] = []
        for spec in specs {
            let parts = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let address = Self.ipv4(String(parts[0])), let bits = parts.count == 2 ? Int(parts[1]) : 32, (0...32).contains(bits)
            else {
                throw Refused(description: "--trusted-proxy \(spec.prefix(64)) is not an IPv4 address or network, such as 10.0.0.5 or 172.16.0.0/12")
            }
            let mask: UInt32 = bits == 0 ? 0 : ~0 << (32 - bits)
            networks.append(Network(base: address & mask, mask: mask))
        }
        self.networks = networks
    }

    private static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    /// Whether connections from `address` (host byte order) come from a trusted proxy.
    func trusts(_ address: UInt32) -> Bool {
        networks.contains { $0.contains(address) }
    }

    /// The address `request` is counted against: its connection's, or, from
    /// a trusted proxy, the client's as the proxies name it.
    func client(of request: Request) -> String {
        guard trusts(request.peer) else { return Self.text(request.peer) }
        let named = request.fields[values: Self.forwardedFor].joined(separator: ",")
        var client = Self.text(request.peer)
        for entry in named.split(separator: ",").reversed() {
            let text = entry.trimmingCharacters(in: " \t")
            guard !text.isEmpty else { continue }
            client = Self.key(text)
            guard let address = Self.ipv4(text), trusts(address) else { break }
        }
        return client
    }

    /// An address as the throttle keeps it: IPv4 as it is (also when written
    /// IPv4-mapped, `::ffff:a.b.c.d`, as a dual-stack nginx names IPv4 clients),
    /// IPv6 by its /64 (one subscriber's network), anything else as sent (at
    /// most 64 characters).
    static func key(_ text: String) -> String {
        if let address = ipv4(text) { return Self.text(address) }
        var address = in6_addr()
        guard text.contains(":"), inet_pton(AF_INET6, text, &address) == 1 else { return String(text.prefix(64)) }
        let bytes = withUnsafeBytes(of: address) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            return "\(bytes[12]).\(bytes[13]).\(bytes[14]).\(bytes[15])"
        }
        return stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }.joined(separator: ":") + "::/64"
    }

    /// `text` as an IPv4 address in host byte order; nil when it is not one.
    static func ipv4(_ text: String) -> UInt32? {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        return UInt32(bigEndian: address.s_addr)
    }

    /// `address` (host byte order) as a dotted quad.
    static func text(_ address: UInt32) -> String {
        "\(address >> 24).\(address >> 16 & 255).\(address >> 8 & 255).\(address & 255)"
    }
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var slice = Substring(self)
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}
