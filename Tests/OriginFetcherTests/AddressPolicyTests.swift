import Testing

@testable import OriginFetcher

/// Which addresses are public, what an operator can allow, and how a policy judges both; no sockets.
@Suite struct AddressPolicyTests {
    /// Addresses a feed's image may lead to by default: public servers, and the
    /// edges just outside the refused blocks.
    @Test(arguments: [
        "8.8.8.8", "1.1.1.1", "93.184.216.34", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0",
        "126.255.255.255", "128.0.0.0", "169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0",
        "192.0.1.1", "192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0", "223.255.255.255",
        "2606:4700:4700::1111", "2001:4860:4860::8888", "2001:200::1", "2a00:1450:4001::200e", "3ffe::1",
        "64:ff9b::808:808", "64:ff9b::8.8.8.8",
    ])
    func publicAddressesAreNotSpecial(text: String) throws {
        let address = try #require(IPAddress(text))
        #expect(SpecialAddresses.reason(for: address) == nil, "\(text)")
        #expect(AddressPolicy.publicOnly.admits(address, port: 80, host: { nil }))
    }

    /// Every block that is not a public server's, by its edges, and what it is called.
    @Test(arguments: [
        ("0.0.0.0", "this network (unspecified)"), ("0.255.255.255", "this network (unspecified)"),
        ("10.0.0.1", "private"), ("10.255.255.255", "private"),
        ("100.64.0.1", "shared address space (CGNAT)"), ("100.127.255.255", "shared address space (CGNAT)"),
        ("127.0.0.1", "loopback"), ("127.0.0.2", "loopback"), ("127.255.255.254", "loopback"),
        ("169.254.169.254", "link-local"), ("169.254.0.1", "link-local"),
        ("172.16.0.1", "private"), ("172.31.255.255", "private"),
        ("192.0.0.170", "IETF protocol assignments"), ("192.0.0.8", "IETF protocol assignments"),
        ("192.0.2.1", "documentation (TEST-NET-1)"), ("192.88.99.1", "6to4 relay anycast (deprecated)"),
        ("192.168.0.1", "private"), ("192.168.255.255", "private"),
        ("198.18.0.1", "benchmarking"), ("198.19.255.255", "benchmarking"),
        ("198.51.100.7", "documentation (TEST-NET-2)"), ("203.0.113.9", "documentation (TEST-NET-3)"),
        ("224.0.0.1", "multicast"), ("239.255.255.250", "multicast"),
        ("240.0.0.1", "reserved"), ("255.255.255.255", "reserved"),
        ("::", "unspecified"), ("::1", "loopback"),
        ("::ffff:127.0.0.1", "IPv4-mapped"), ("::ffff:8.8.8.8", "IPv4-mapped"), ("::ffff:169.254.169.254", "IPv4-mapped"),
        ("::127.0.0.1", "IPv4-compatible (deprecated)"), ("::8.8.8.8", "IPv4-compatible (deprecated)"),
        ("64:ff9b::127.0.0.1", "NAT64 of loopback"), ("64:ff9b::a9fe:a9fe", "NAT64 of link-local"),
        ("64:ff9b::10.1.2.3", "NAT64 of private"), ("64:ff9b:1::1", "NAT64 for local use"),
        ("100::1", "discard-only"),
        ("2001::1", "IETF protocol assignments"), ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "IETF protocol assignments"),
        ("2001:2::1", "IETF protocol assignments"), ("2001:20::1", "IETF protocol assignments"),
        ("2001:db8::1", "documentation"), ("3fff::1", "documentation"),
        ("2002:7f00:1::1", "6to4"), ("2002:808:808::1", "6to4"),
        ("5f00::1", "segment routing SIDs"),
        ("fc00::1", "unique-local"), ("fd12:3456:789a::1", "unique-local"),
        ("fe80::1", "link-local"), ("febf::1", "link-local"), ("fec0::1", "site-local (deprecated)"),
        ("ff02::1", "multicast"), ("ff0e::1", "multicast"),
        ("1::1", "not global unicast"), ("4000::1", "not global unicast"), ("e000::1", "not global unicast"),
    ])
    func specialAddressesAreRefusedByDefault(text: String, name: String) throws {
        let address = try #require(IPAddress(text))
        #expect(SpecialAddresses.reason(for: address) == name, "\(text)")
        #expect(!AddressPolicy.publicOnly.admits(address, port: 80, host: { "example.com" }), "\(text)")
        #expect(AddressPolicy.anywhere.admits(address, port: 80, host: { nil }))
    }

    @Test func addressesReadAndWriteBack() throws {
        #expect(IPAddress("127.0.0.1") == .v4(0x7f00_0001))
        #expect(IPAddress("::1") == .v6(1))
        #expect(IPAddress("::ffff:127.0.0.1")?.unmapped == .v4(0x7f00_0001))
        #expect(IPAddress("::1")?.unmapped == .v6(1))
        // Only the written forms: the shorthands libcurl's URL parser reads are its business.
        for text in ["2130706433", "127.1", "0x7f000001", "localhost", "", "1.2.3.4.5", "::1%lo", "[::1]"] {
            #expect(IPAddress(text) == nil, "\(text)")
        }
        for text in ["10.0.0.0/8", "fd00::/8", "::ffff:0.0.0.0/96", "8.8.8.8/32"] {
            #expect(IPNetwork(text)?.description == text)
        }
        #expect(IPNetwork("10.1.2.3/8")?.description == "10.0.0.0/8", "host bits cleared")
        #expect(IPNetwork("::1")?.description == "::1/128")
        for text in ["10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/8/8", "10/8"] {
            #expect(IPNetwork(text) == nil, "\(text)")
        }
        #expect(IPNetwork("0.0.0.0/0")?.contains(IPAddress("8.8.8.8")!) == true)
        #expect(IPNetwork("0.0.0.0/0")?.contains(IPAddress("::1")!) == false, "an IPv4 block holds no IPv6 address")
    }

    @Test(arguments: [
        ("127.0.0.0/8", "127.0.0.0/8"), ("10.0.0.5", "10.0.0.5"), ("10.0.0.5:8080", "10.0.0.5:8080"),
        ("::1", "::1"), ("[::1]", "::1"), ("[::1]:8443", "[::1]:8443"), ("fd00::/8", "fd00::/8"),
        ("images.internal", "images.internal"), ("Images.Internal.:8443", "images.internal:8443"),
        ("localhost", "localhost"), ("my_host-1.lan", "my_host-1.lan"),
    ])
    func allowancesRead(text: String, written: String) throws {
        #expect(OriginAllowance(text)?.description == written)
    }

    @Test(arguments: [
        "", " ", "10.0.0.0/8:80", "host:0", "host:65536", "host:", "host:http", "[::1", "[::1]x", "[nothost]",
        "ho st", "http://host", "host/path", "127.1", "2130706433", ".internal", "a:b:c", "*.internal",
    ])
    func nonsenseIsNoAllowance(text: String) {
        #expect(OriginAllowance(text) == nil, "\(text)")
    }

    @Test func allowancesLetTheirNetworksAndHostsThroughAndNothingElse() throws {
        let allowances = ["127.0.0.0/8", "10.1.2.3:9000", "images.internal", "cache.internal:8443"].compactMap(OriginAllowance.init)
        let policy = AddressPolicy.publicOnly(allowing: allowances)
        func admits(_ address: String, _ port: Int, host: String? = "feed.example") -> Bool {
            policy.admits(IPAddress(address)!, port: port, host: { host })
        }
        #expect(admits("127.0.0.2", 80))
        #expect(admits("::ffff:127.0.0.1", 80), "an IPv4-mapped address is judged as the IPv4 address it maps")
        #expect(!admits("::1", 80), "IPv6 loopback is not in an IPv4 block")
        #expect(admits("10.1.2.3", 9000))
        #expect(!admits("10.1.2.3", 9001), "the port is part of the allowance")
        #expect(!admits("10.1.2.4", 9000))
        #expect(admits("192.168.7.7", 80, host: "images.internal"), "a name allows whatever it resolves to")
        #expect(admits("192.168.7.7", 80, host: "IMAGES.internal."))
        #expect(!admits("192.168.7.7", 80, host: "images.internal.evil.example"))
        #expect(!admits("192.168.7.7", 80, host: nil))
        #expect(admits("fd00::7", 8443, host: "cache.internal"))
        #expect(!admits("fd00::7", 443, host: "cache.internal"))
        #expect(admits("8.8.8.8", 1, host: nil), "public addresses need no allowance")
        // The host is asked only when a name could allow the address.
        var asked = 0
        _ = AddressPolicy.publicOnly(allowing: [OriginAllowance("10.0.0.0/8")!]).admits(IPAddress("127.0.0.1")!, port: 80) {
            asked += 1
            return "x"
        }
        _ = policy.admits(IPAddress("8.8.8.8")!, port: 80) {
            asked += 1
            return "x"
        }
        // Nor when a network allowance admits it already.
        #expect(
            policy.admits(IPAddress("127.0.0.1")!, port: 80) {
                asked += 1
                return "x"
            })
        #expect(asked == 0)
    }
}
