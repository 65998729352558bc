#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address as a number, so that networks are a mask and a compare.
public enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// An IPv4 address, its first octet in the high byte.
    case v4(UInt32)
    /// An IPv6 address, its first byte in the high byte.
    case v6(UInt128)

    /// Reads an address as `inet_pton` does: dotted-quad IPv4 (no shorthand
    /// such as `127.1` or `2130706433`), or IPv6 in any of its written forms;
    /// nil for anything else.
    public init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self = withUnsafeBytes(of: &v4) { IPAddress(bytes: $0)! }
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            self = withUnsafeBytes(of: &v6) { IPAddress(bytes: $0)! }
            return
        }
        return nil
    }

    /// The address in `bytes`, in network order: 4 bytes for IPv4, 16 for IPv6.
    public init?(bytes: UnsafeRawBufferPointer) {
        switch bytes.count {
        case 4: self = .v4(bytes.reduce(0) { $0 << 8 | UInt32($1) })
        case 16: self = .v6(bytes.reduce(0) { $0 << 8 | UInt128($1) })
        default: return nil
        }
    }

    /// The IPv4 address an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) stands
    /// for; any other address itself.
    public var unmapped: IPAddress {
        guard case .v6(let value) = self, value >> 32 == 0xffff else { return self }
        return .v4(UInt32(truncatingIfNeeded: value))
    }

    /// How many bits the address has: 32 or 128.
    var bitWidth: Int {
        switch self {
        case .v4: 32
        case .v6: 128
        }
    }

    /// The address written as `inet_ntop` writes it (`127.0.0.1`, `::1`).
    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch self {
        case .v4(let value):
            var address = in_addr()
            address.s_addr = value.bigEndian
            _ = inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count))
        case .v6(let value):
            var address = in6_addr()
            withUnsafeMutableBytes(of: &address) { raw in
                for index in 0..<16 { raw[index] = UInt8(truncatingIfNeeded: value >> (8 * (15 - index))) }
            }
            _ = inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count))
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A block of addresses: an address and how many of its leading bits are fixed
/// (`10.0.0.0/8`, `fc00::/7`; a single address is `/32` or `/128`).
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The first address of the block (the bits past the prefix are zero).
    public let address: IPAddress
    /// How many leading bits every address of the block shares.
    public let prefixLength: Int

    /// The block of `prefixLength` leading bits of `address` (the rest cleared);
    /// nil when the length does not fit the address.
    public init?(_ address: IPAddress, prefixLength: Int) {
        guard (0...address.bitWidth).contains(prefixLength) else { return nil }
        self.prefixLength = prefixLength
        switch address {
        case .v4(let value): self.address = .v4(value & Self.mask32(prefixLength))
        case .v6(let value): self.address = .v6(value & Self.mask128(prefixLength))
        }
    }

    /// Reads CIDR notation (`192.168.0.0/16`, `fd00::/8`) or a single address
    /// (`10.1.2.3`, `::1`); nil for anything else. Bits past the prefix are
    /// cleared, as `ip route` does.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = IPAddress(String(parts[0])) else { return nil }
        if parts.count == 1 {
            self.init(address, prefixLength: address.bitWidth)
        } else {
            guard !parts[1].isEmpty, parts[1].allSatisfy(\.isASCII), parts[1].allSatisfy(\.isNumber), let length = Int(parts[1]) else { return nil }
            self.init(address, prefixLength: length)
        }
    }

    /// Whether `other` is in the block (an IPv4 block never holds an IPv6 address, nor the other way round).
    public func contains(_ other: IPAddress) -> Bool {
        switch (address, other) {
        case (.v4(let base), .v4(let value)): return value & Self.mask32(prefixLength) == base
        case (.v6(let base), .v6(let value)): return value & Self.mask128(prefixLength) == base
        default: return false
        }
    }

    /// `address/prefixLength`.
    public var description: String { "\(address)/\(prefixLength)" }

    private static func mask32(_ length: Int) -> UInt32 { length == 0 ? 0 : UInt32.max << (32 - length) }
    private static func mask128(_ length: Int) -> UInt128 { length == 0 ? 0 : UInt128.max << (128 - length) }
}
