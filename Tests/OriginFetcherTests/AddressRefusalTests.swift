import Foundation
import HTTPTestClient
import Testing

@testable import OriginFetcher

/// A public-only fetch never reaches a loopback origin, however its URL spells
/// the address, through a redirect, or on a connection another fetch left open.
/// Canaries are real origins on loopback addresses (127.0.0.0/8 and ::1) that
/// count every connection: a refused fetch leaves them at zero.
@Suite struct AddressRefusalTests {
    /// Canaries on 127.0.0.1, 127.0.0.2 and ::1, each answering `/canary`.
    struct Canaries {
        let one: FaultyOrigin
        let two: FaultyOrigin
        let six: FaultyOrigin
        var all: [FaultyOrigin] { [one, two, six] }

        init() throws {
            one = try FaultyOrigin(host: "127.0.0.1")
            two = try FaultyOrigin(host: "127.0.0.2")
            six = try FaultyOrigin(host: "::1")
            for canary in all { canary.script("/canary", .respond(contentType: "image/jpeg", body: patternBytes(1000))) }
        }

        /// Every way a URL can name a loopback canary: dotted, another address of
        /// 127/8, decimal, hex, short, the unspecified address (which reaches loopback),
        /// IPv6, IPv4-mapped IPv6, and a name.
        var spellings: [(url: String, canary: FaultyOrigin)] {
            [
                ("http://127.0.0.1:\(one.port)/canary", one),
                ("http://127.0.0.2:\(two.port)/canary", two),
                ("http://2130706433:\(one.port)/canary", one),
                ("http://0x7f000001:\(one.port)/canary", one),
                ("http://127.1:\(one.port)/canary", one),
                ("http://0.0.0.0:\(one.port)/canary", one),
                ("http://[::1]:\(six.port)/canary", six),
                ("http://[::]:\(six.port)/canary", six),
                ("http://[::ffff:127.0.0.1]:\(one.port)/canary", one),
                ("http://localhost:\(one.port)/canary", one),
                ("http://LocalHost:\(one.port)/canary", one),
            ]
        }

        var connections: Int { all.reduce(0) { $0 + $1.connectionsAccepted } }

        func stop() async throws {
            for canary in all { try await onThread { canary.stop() } }
        }
    }

    static let publicOnly = FetchLimits(connectTimeout: .seconds(2), addressPolicy: .publicOnly)

    static func limits(allowing allowances: [String]) -> FetchLimits {
        FetchLimits(connectTimeout: .seconds(2), addressPolicy: .publicOnly(allowing: allowances.compactMap(OriginAllowance.init)))
    }

    @Test func everySpellingOfLoopbackIsRefusedBeforeAConnection() async throws {
        let canaries = try Canaries()
        let fetcher = OriginFetcher()
        defer { fetcher.shutdown() }
        for (url, _) in canaries.spellings {
            let failure = await fetcher.result(url, limits: Self.publicOnly).failure
            guard case .addressRefused = failure else {
                Issue.record("\(url): \(String(describing: failure))")
                continue
            }
        }
        #expect(await fetcher.result("http://localhost:\(canaries.one.port)/canary", limits: Self.publicOnly).failure == .addressRefused("localhost"))
        #expect(await fetcher.result("http://2130706433:\(canaries.one.port)/canary", limits: Self.publicOnly).failure == .addressRefused("127.0.0.1"))
        #expect(canaries.connections == 0, "a canary was reached")
        #expect(fetcher.stats.refused == canaries.spellings.count + 2)
        #expect(fetcher.stats.failed == canaries.spellings.count + 2)
        try await canaries.stop()
    }

    @Test func anAllowanceLetsItsOwnThroughAndNoOther() async throws {
        let canaries = try Canaries()
        let fetcher = OriginFetcher()
        defer { fetcher.shutdown() }
        // The whole IPv4 loopback block: every IPv4 spelling connects; IPv6 loopback does not,
        // nor the unspecified address (which the kernel takes to loopback), not being in 127/8.
        let loopback4 = Self.limits(allowing: ["127.0.0.0/8"])
        for (url, canary) in canaries.spellings {
            let result = await fetcher.result(url, limits: loopback4)
            if canary === canaries.six || url.hasPrefix("http://0.0.0.0:") {
                guard case .addressRefused = result.failure else {
                    Issue.record("\(url) was not refused: \(result)")
                    continue
                }
            } else {
                #expect(result.body?.bytes.count == 1000, "\(url): \(result)")
            }
        }
        #expect(canaries.six.connectionsAccepted == 0)
        #expect(canaries.one.connectionsAccepted >= 1)
        // One address and its port.
        let two = canaries.two
        #expect(await fetcher.result(two.url("/canary"), limits: Self.limits(allowing: ["127.0.0.2:\(two.port)"])).body != nil)
        let otherPort = Self.limits(allowing: ["127.0.0.2:\(two.port == 65535 ? 1 : two.port + 1)"])
        #expect(await fetcher.result(two.url("/canary"), limits: otherPort).failure == .addressRefused("127.0.0.2"))
        // IPv6 loopback, by address.
        #expect(await fetcher.result(canaries.six.url("/canary"), limits: Self.limits(allowing: ["::1"])).body != nil)
        try await canaries.stop()
    }

    @Test func aNameAllowsItsOwnURLsButNotARedirectElsewhere() async throws {
        let canaries = try Canaries()
        let allowed = try FaultyOrigin(host: "127.0.0.3")
        let fetcher = OriginFetcher()
        defer { fetcher.shutdown() }
        let one = canaries.one
        let two = canaries.two
        allowed.script("/image", .respond(contentType: "image/png", body: [1, 2, 3]))
        allowed.script("/to-two", .redirect(to: two.url("/canary")))
        allowed.script("/to-decimal", .redirect(to: "http://2130706433:\(one.port)/canary"))
        allowed.script("/to-six", .redirect(to: "http://[::1]:\(canaries.six.port)/canary"))
        allowed.script("/to-localhost-elsewhere", .redirect(to: "http://localhost:\(one.port)/canary"))
        allowed.script("/to-self-by-address", .redirect(to: allowed.url("/image")))
        // A second origin on 127.0.0.1, reached by the name "localhost" on its own port only.
        let redirector = try FaultyOrigin(host: "127.0.0.1")
        redirector.script("/image", .respond(contentType: "image/png", body: [4, 5, 6]))
        redirector.script("/to-two", .redirect(to: two.url("/canary")))
        redirector.script("/to-decimal", .redirect(to: "http://2130706433:\(one.port)/canary"))
        redirector.script("/to-six", .redirect(to: "http://[::1]:\(canaries.six.port)/canary"))
        redirector.script("/to-localhost-elsewhere", .redirect(to: "http://localhost:\(one.port)/canary"))
        redirector.script("/to-self-by-address", .redirect(to: redirector.url("/image")))
        let byName = Self.limits(allowing: ["localhost:\(redirector.port)"])
        let base = "http://localhost:\(redirector.port)"
        #expect(await fetcher.result(base + "/image", limits: byName).body?.bytes == [4, 5, 6], "the name's own URL")
        #expect(await fetcher.result(base + "/to-two", limits: byName).failure == .addressRefused("127.0.0.2"))
        #expect(await fetcher.result(base + "/to-decimal", limits: byName).failure == .addressRefused("127.0.0.1"))
        #expect(await fetcher.result(base + "/to-six", limits: byName).failure == .addressRefused("[::1]"))
        #expect(await fetcher.result(base + "/to-localhost-elsewhere", limits: byName).failure == .addressRefused("localhost"))
        // The same origin named by its address is another host: the name's allowance does not cover it.
        #expect(await fetcher.result(base + "/to-self-by-address", limits: byName).failure == .addressRefused("127.0.0.1"))
        #expect(redirector.requests(to: "/image") == 1)

        // An address allowance (127.0.0.3): its redirects to loopback elsewhere are refused as well.
        let byAddress = Self.limits(allowing: ["127.0.0.3"])
        #expect(await fetcher.result(allowed.url("/image"), limits: byAddress).body?.bytes == [1, 2, 3])
        #expect(await fetcher.result(allowed.url("/to-two"), limits: byAddress).failure == .addressRefused("127.0.0.2"))
        #expect(await fetcher.result(allowed.url("/to-decimal"), limits: byAddress).failure == .addressRefused("127.0.0.1"))
        #expect(await fetcher.result(allowed.url("/to-six"), limits: byAddress).failure == .addressRefused("[::1]"))
        #expect(await fetcher.result(allowed.url("/to-localhost-elsewhere"), limits: byAddress).failure == .addressRefused("localhost"))
        #expect(allowed.requests(to: "/to-two") == 1 && allowed.requests(to: "/to-six") == 1)
        #expect(canaries.connections == 0, "a redirect reached a canary")
        try await canaries.stop()
        try await onThread { allowed.stop() }
        try await onThread { redirector.stop() }
    }

    @Test func aConnectionLeftOpenByATrustedFetchIsNoWayAround() async throws {
        let canary = try FaultyOrigin(host: "127.0.0.2")
        canary.script("/canary", .respond(body: [7]))
        let fetcher = OriginFetcher()
        defer { fetcher.shutdown() }
        // A fetch the caller trusts (a cluster peer, say) leaves a kept-alive connection to the address…
        #expect(await fetcher.result(canary.url("/canary")).body?.bytes == [7])
        #expect(canary.connectionsAccepted == 1 && canary.openConnections == 1)
        // …which a public-only fetch of the same host must not reuse: nothing more reaches the canary.
        #expect(await fetcher.result(canary.url("/canary"), limits: Self.publicOnly).failure == .addressRefused("127.0.0.2"))
        #expect(canary.requests(to: "/canary") == 1)
        // The same with a name allowance: the name's fetch opens it, a plain public-only one may not use it.
        let named = try FaultyOrigin(host: "127.0.0.1")
        named.script("/x", .respond(body: [8]))
        let url = "http://localhost:\(named.port)/x"
        #expect(await fetcher.result(url, limits: Self.limits(allowing: ["localhost"])).body?.bytes == [8])
        #expect(await fetcher.result(url, limits: Self.publicOnly).failure == .addressRefused("localhost"))
        #expect(named.requests(to: "/x") == 1)
        // And the trusted fetch still has its connection's worth: it is not broken by the refusals.
        #expect(await fetcher.result(canary.url("/canary")).body?.bytes == [7])
        #expect(canary.requests(to: "/canary") == 2)
        try await onThread { canary.stop() }
        try await onThread { named.stop() }
    }

    @Test func theLibraryDefaultStillGoesAnywhere() async throws {
        let canary = try FaultyOrigin(host: "127.0.0.2")
        canary.script("/canary", .respond(body: [9]))
        let fetcher = OriginFetcher()
        defer { fetcher.shutdown() }
        #expect(await fetcher.result("http://2130706433:1/x", limits: FetchLimits(connectTimeout: .seconds(2))).failure?.isConnectionFailed == true)
        #expect(await fetcher.result(canary.url("/canary")).body?.bytes == [9])
        #expect(fetcher.stats.refused == 0)
        try await onThread { canary.stop() }
    }
}
