import Foundation
import HTTPTestClient
import Testing

@testable import Operations
@testable import Warmfeed

/// The operator's door (issue 34): a sign-in form that posts the token (never
/// a URL), refused from another site; a way out that the server forgets;
/// wrong tokens slowed per address; no short token anywhere.
@Suite struct AdminDoorTests {
    static let token = "test-admin-token-of-32-characters"
    /// What a browser sends with a form posted from a page of this site (the test client's Host is 127.0.0.1:PORT).
    static let sameSite = [("Origin", "http://127.0.0.1"), ("Sec-Fetch-Site", "same-origin"), ("Accept", "text/html")]

    /// The session id a sign-in's 303 sets.
    static func session(_ response: TestResponse) throws -> String {
        let cookie = try #require(response.header("Set-Cookie"))
        #expect(cookie.hasPrefix("wf_admin=") && cookie.contains("; HttpOnly") && cookie.contains("; SameSite=Strict"), "\(cookie)")
        return String(cookie.dropFirst("wf_admin=".count).prefix { $0 != ";" })
    }

    @Test func aBrowserWithoutASessionGetsTheSignInFormWhichPostsTheTokenInItsBody() async throws {
        try await ServedFeed.with(items: 5) { feed in
            let form = try await feed.get("/admin", headers: [("Accept", "text/html")])
            #expect(form.status == 401)
            #expect(form.header("WWW-Authenticate")?.hasPrefix("Bearer") == true && form.header("Cache-Control") == "no-store")
            #expect(form.header("Content-Security-Policy")?.contains("form-action 'self'") == true)
            #expect(form.text.contains(#"<form method="post" action="/admin/sign-in">"#))
            #expect(form.text.contains(#"name="token" type="password""#) && !form.text.contains(Self.token))
            // The form's post: the session, and on to the dashboard, which has a way out.
            let signedIn = try await feed.post("/admin/sign-in", form: "token=\(Self.token)", headers: Self.sameSite)
            #expect(signedIn.status == 303 && signedIn.header("Location") == "/admin")
            let session = try Self.session(signedIn)
            let dashboard = try await feed.get("/admin", headers: [("Cookie", "wf_admin=\(session)")])
            #expect(dashboard.status == 200)
            #expect(dashboard.text.contains(#"<form class="sign-out" method="post" action="/admin/sign-out">"#))
            // A wrong token: the form again, saying so, and no session; as does no token, or two.
            for body in ["token=test-admin-token-of-32-characterS", "", "token=\(Self.token)&token=\(Self.token)", "tok=\(Self.token)"] {
                let wrong = try await feed.post("/admin/sign-in", form: body, headers: Self.sameSite)
                #expect(wrong.status == 401 && wrong.header("Set-Cookie") == nil, "\(body)")
                #expect(wrong.text.contains("That is not the admin token.") && wrong.text.contains("<form"), "\(body)")
            }
            // The token percent-encoded as a browser may send it is still the token.
            let encoded = Self.token.replacingOccurrences(of: "-", with: "%2D")
            #expect(try await feed.post("/admin/sign-in", form: "token=\(encoded)", headers: Self.sameSite).status == 303)
            // A body that is no form carries no token.
            let plain = try await feed.post("/admin/sign-in", form: "token=\(Self.token)", headers: Self.sameSite, contentType: "text/plain")
            #expect(plain.status == 401 && plain.header("Set-Cookie") == nil)
            // A form larger than any sign-in: 413, before the handler.
            let huge = try await feed.post("/admin/sign-in", form: "token=" + String(repeating: "x", count: 10_000), headers: Self.sameSite)
            #expect(huge.status == 413)
        }
    }

    @Test func aFormFromAnotherSiteSignsNoOneInOrOut() async throws {
        try await ServedFeed.with(items: 5) { feed in
            for headers in [
                [("Origin", "https://evil.example")], [("Sec-Fetch-Site", "cross-site")], [("Sec-Fetch-Site", "same-site")], [("Origin", "null")],
                [("Origin", "http://127.0.0.1.evil.example"), ("Sec-Fetch-Site", "same-origin")],
            ] {
                let response = try await feed.post("/admin/sign-in", form: "token=\(Self.token)", headers: headers)
                #expect(response.status == 403 && response.header("Set-Cookie") == nil, "\(headers)")
            }
            // No browser (no Origin, no Sec-Fetch-Site), or the same host on another port (nginx passes $host): let in.
            #expect(try await feed.post("/admin/sign-in", form: "token=\(Self.token)").status == 303)
            let session = try Self.session(try await feed.post("/admin/sign-in", form: "token=\(Self.token)", headers: [("Origin", "http://127.0.0.1:8080")]))
            // Another site cannot sign the operator out either.
            let out = try await feed.post("/admin/sign-out", form: "", headers: [("Cookie", "wf_admin=\(session)"), ("Sec-Fetch-Site", "cross-site")])
            #expect(out.status == 403)
            #expect(try await feed.get("/admin/cache", headers: [("Cookie", "wf_admin=\(session)")]).status == 200)
        }
    }

    @Test func signingOutEndsTheSessionOnTheServerAndClearsTheCookie() async throws {
        try await ServedFeed.with(items: 5) { feed in
            let session = try Self.session(try await feed.post("/admin/sign-in", form: "token=\(Self.token)", headers: Self.sameSite))
            let other = try Self.session(try await feed.post("/admin/sign-in", form: "token=\(Self.token)", headers: Self.sameSite))
            #expect(try await feed.get("/admin/cache", headers: [("Cookie", "wf_admin=\(session)")]).status == 200)
            let out = try await feed.post("/admin/sign-out", form: "", headers: Self.sameSite + [("Cookie", "wf_admin=\(session)")])
            #expect(out.status == 303 && out.header("Location") == "/admin")
            let cleared = try #require(out.header("Set-Cookie"))
            #expect(cleared.hasPrefix("wf_admin=;") && cleared.contains("Max-Age=0") && cleared.contains("HttpOnly"), "\(cleared)")
            // The server forgot it: a copy of the cookie kept elsewhere opens nothing.
            for route in ["/admin", "/admin/cache", "/metrics"] {
                #expect(try await feed.get(route, headers: [("Cookie", "wf_admin=\(session)")]).status == 401, "\(route)")
            }
            // Another browser's session is its own.
            #expect(try await feed.get("/admin/cache", headers: [("Cookie", "wf_admin=\(other)")]).status == 200)
            let get = try await feed.get("/admin/sign-out")
            #expect(get.status == 405 && get.header("Allow") == "POST")
        }
    }

    @Test func wrongTokensAreSlowedPerAddressAndNoTokenIsReadMeanwhile() async throws {
        // Behind a trusted proxy (loopback here), each client is its X-Forwarded-For.
        try await ServedFeed.with(
            items: 5,
            configure: {
                $0.trustedProxies = ["127.0.0.1"]
                $0.signInFirstWait = .seconds(600)  // no wait ends while the test looks
            }
        ) { feed in
            let guesser = ("X-Forwarded-For", "203.0.113.1")
            let operatorAddress = ("X-Forwarded-For", "198.51.100.2")
            let session = try Self.session(try await feed.post("/admin/sign-in", form: "token=\(Self.token)", headers: Self.sameSite + [guesser]))
            for guess in 0..<5 {
                let wrong = try await feed.get("/admin/cache", headers: [("Authorization", "Bearer guess-\(guess)"), guesser])
                #expect(wrong.status == 401, "guess \(guess)")
            }
            // Now even the right token is not read from that address, by any door.
            let bearer = try await feed.get("/metrics", headers: [("Authorization", "Bearer \(Self.token)"), guesser])
            // What is left of the 600 s wait, in whole seconds (the test's own pace takes some of it).
            let retryAfter = try #require(bearer.header("Retry-After").flatMap { Int($0) })
            #expect(bearer.status == 429 && (1...600).contains(retryAfter), "\(bearer.status) \(retryAfter)")
            #expect(try await feed.get("/admin?token=\(Self.token)", headers: [guesser]).status == 429)
            let form = try await feed.post("/admin/sign-in", form: "token=\(Self.token)", headers: Self.sameSite + [guesser])
            #expect(form.status == 429 && form.header("Set-Cookie") == nil)
            #expect(form.text.contains("Too many wrong admin tokens from this address: try again in ") && form.text.contains("<form"))
            // A session opened before is no guess, and readers are never slowed.
            #expect(try await feed.get("/admin/cache", headers: [("Cookie", "wf_admin=\(session)"), guesser]).status == 200)
            #expect(try await feed.get("/", headers: [guesser]).status == 200)
            // Another client behind the same proxy signs in at once; its own wrong token counts for it alone.
            #expect(try await feed.get("/admin/cache", headers: [("Authorization", "Bearer wrong"), operatorAddress]).status == 401)
            #expect(try await feed.get("/admin/cache", headers: [("Authorization", "Bearer \(Self.token)"), operatorAddress]).status == 200)
            // What the guesser writes to the left of the proxy's own entry is not read.
            let dodge = try await feed.get("/admin/cache", headers: [("Authorization", "Bearer \(Self.token)"), ("X-Forwarded-For", "9.9.9.9, 203.0.113.1")])
            #expect(dodge.status == 429)
        }
    }

    @Test func withoutATrustedProxyAForwardedAddressIsNoWayAround() async throws {
        try await ServedFeed.with(items: 5, configure: { $0.signInFirstWait = .seconds(600) }) { feed in
            for guess in 0..<5 {
                let wrong = try await feed.get("/admin/cache", headers: [("Authorization", "Bearer guess"), ("X-Forwarded-For", "203.0.113.\(guess)")])
                #expect(wrong.status == 401)
            }
            let next = try await feed.get("/admin/cache", headers: [("Authorization", "Bearer \(Self.token)"), ("X-Forwarded-For", "203.0.113.99")])
            #expect(next.status == 429)
        }
    }

    @Test func aShortTokenOrAProxyThatIsNoAddressIsAConfigurationError() throws {
        var configuration = WarmfeedConfiguration()
        configuration.adminToken = "change-me"
        #expect(throws: ConfigurationError.self) { try configuration.validate(environment: [:]) }
        configuration.adminToken = String(Self.token.prefix(31))
        #expect(throws: ConfigurationError.self) { try configuration.validate(environment: [:]) }
        configuration.adminToken = nil
        #expect(throws: ConfigurationError.self) { try configuration.validate(environment: ["WARMFEED_ADMIN_TOKEN": "change-me"]) }
        do {
            try configuration.validate(environment: ["WARMFEED_ADMIN_TOKEN": "change-me"])
        } catch {
            #expect(error.description.contains("WARMFEED_ADMIN_TOKEN") && error.description.contains("at least 32 characters"))
        }
        try configuration.validate(environment: ["WARMFEED_ADMIN_TOKEN": Self.token])
        try configuration.validate(environment: [:])  // none given: one is generated into the data folder
        configuration.trustedProxies = ["nginx"]
        #expect(throws: ConfigurationError.self) { try configuration.validate(environment: [:]) }
    }
}
