import HTTPServer
import Testing

@testable import Operations

/// Wrong admin tokens slowed per address (issue 34): a few free, then a wait
/// that doubles, capped; a right token forgets; memory bounded. The clock is
/// the test's: no time passes but what it says.
@Suite struct SignInThrottleTests {
    @Test func aFewWrongTokensAreFreeThenEachWaitDoublesUpToTheLongest() {
        var throttle = SignInThrottle()
        let rules = throttle.rules
        for failure in 1..<rules.freeFailures {
            #expect(throttle.verdict(for: "10.0.0.1", now: 0) == .check)
            #expect(throttle.failed("10.0.0.1", now: 0) == .check, "failure \(failure) is free")
        }
        #expect(throttle.failed("10.0.0.1", now: 0) == .wait(seconds: 1))
        #expect(throttle.verdict(for: "10.0.0.1", now: 0.5) == .wait(seconds: 1))
        #expect(throttle.verdict(for: "10.0.0.1", now: 1) == .check)
        // Each wrong token after the wait doubles it.
        var now = 1.0
        var waits: [Int] = []
        for _ in 0..<14 {
            guard case .wait(let seconds) = throttle.failed("10.0.0.1", now: now) else {
                Issue.record("no wait")
                return
            }
            waits.append(seconds)
            now += Double(seconds)
            #expect(throttle.verdict(for: "10.0.0.1", now: now - 0.25) != .check)
            #expect(throttle.verdict(for: "10.0.0.1", now: now) == .check)
        }
        #expect(waits == [2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900, 900, 900])
        // Another address was never slowed.
        #expect(throttle.verdict(for: "10.0.0.2", now: now) == .check)
    }

    @Test func aRightTokenForgetsAndAQuietAddressIsForgotten() {
        var throttle = SignInThrottle()
        for _ in 0..<4 { throttle.failed("a", now: 0) }
        throttle.succeeded("a")
        // After a right token, its free tries are whole again.
        for _ in 0..<4 { #expect(throttle.failed("a", now: 1) == .check) }
        #expect(throttle.failed("a", now: 1) == .wait(seconds: 1))
        // Quiet for `forgetAfter` after its wait: forgotten, its free tries whole again.
        let later = 2 + throttle.rules.forgetAfter
        #expect(throttle.verdict(for: "a", now: later) == .check)
        for _ in 0..<4 { #expect(throttle.failed("a", now: later) == .check) }
    }

    @Test func memoryIsBoundedAndTheOldestAddressMakesRoom() {
        var rules = SignInThrottle.Rules()
        rules.capacity = 100
        var throttle = SignInThrottle(rules: rules)
        // The first address is slowed, then 150 others each offer one wrong token.
        for _ in 0..<6 { throttle.failed("first", now: 0) }
        #expect(throttle.verdict(for: "first", now: 1) != .check)
        for n in 0..<150 { throttle.failed("other-\(n)", now: 10 + Double(n)) }
        #expect(throttle.records.count == 100)
        // The oldest made room: the first address, then the earliest others.
        #expect(throttle.records["first"] == nil)
        #expect(throttle.records["other-0"] == nil && throttle.records["other-149"] != nil)
        // Forgotten records are the first to go when there is no room.
        let later = 200 + rules.forgetAfter
        throttle.failed("fresh", now: later)
        #expect(throttle.records.count == 1)
    }
}

/// Which address a sign-in is counted against: the connection's, or behind a
/// trusted proxy the client it names, read from the right.
@Suite struct TrustedProxiesTests {
    static func request(peer: String, forwardedFor: [String] = []) -> Request {
        var headers = HTTPFields()
        for value in forwardedFor { headers.append(HTTPField(name: HTTPField.Name("X-Forwarded-For")!, value: value)) }
        return Request(path: "/admin", headers: headers, peer: TrustedProxies.ipv4(peer) ?? 0)
    }

    @Test func networksParseAndNonsenseIsRefused() throws {
        let proxies = try TrustedProxies(["127.0.0.1", "172.16.0.0/12", "10.1.2.3/8"])
        #expect(proxies.trusts(try #require(TrustedProxies.ipv4("127.0.0.1"))))
        #expect(!proxies.trusts(try #require(TrustedProxies.ipv4("127.0.0.2"))))
        #expect(proxies.trusts(try #require(TrustedProxies.ipv4("172.31.255.1"))))
        #expect(!proxies.trusts(try #require(TrustedProxies.ipv4("172.32.0.1"))))
        #expect(proxies.trusts(try #require(TrustedProxies.ipv4("10.200.0.1"))))
        #expect(try TrustedProxies(["0.0.0.0/0"]).trusts(12345))
        for bad in ["", "localhost", "::1", "10.0.0.0/33", "10.0.0.0/-1", "10.0.0/8", "10.0.0.1/", "1.2.3.4/8/9"] {
            #expect(throws: TrustedProxies.Refused.self, "\(bad)") { try TrustedProxies([bad]) }
        }
    }

    @Test func anUntrustedPeerIsCountedAsItselfWhateverItSays() {
        let proxies = TrustedProxies.none
        #expect(proxies.client(of: Self.request(peer: "192.0.2.7", forwardedFor: ["203.0.113.9"])) == "192.0.2.7")
        #expect(proxies.client(of: Self.request(peer: "127.0.0.1")) == "127.0.0.1")
    }

    @Test func behindATrustedProxyTheClientIsTheRightmostAddressNotTrusted() throws {
        let proxies = try TrustedProxies(["127.0.0.1", "10.0.0.0/8"])
        // nginx appends the address it saw; what the client wrote is to its left and never read.
        #expect(proxies.client(of: Self.request(peer: "127.0.0.1", forwardedFor: ["1.1.1.1, 203.0.113.9"])) == "203.0.113.9")
        // A chain of trusted proxies is walked through; several header lines read as one list.
        #expect(proxies.client(of: Self.request(peer: "127.0.0.1", forwardedFor: ["6.6.6.6, 198.51.100.4", "10.0.0.8"])) == "198.51.100.4")
        // No header: the proxy itself. IPv6 clients by their /64.
        #expect(proxies.client(of: Self.request(peer: "127.0.0.1")) == "127.0.0.1")
        #expect(proxies.client(of: Self.request(peer: "127.0.0.1", forwardedFor: ["2001:db8:1:2:aaaa::1"])) == "2001:db8:1:2::/64")
        // An IPv4 client as a dual-stack proxy writes it is that IPv4 client, not one /64 for all of them.
        #expect(proxies.client(of: Self.request(peer: "127.0.0.1", forwardedFor: ["::ffff:203.0.113.9"])) == "203.0.113.9")
        #expect(
            proxies.client(of: Self.request(peer: "127.0.0.1", forwardedFor: ["2001:db8:1:2:bbbb::9"]))
                == proxies.client(of: Self.request(peer: "127.0.0.1", forwardedFor: ["2001:db8:1:2:aaaa::1"])))
    }
}
