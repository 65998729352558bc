import HTTPServer
import Synchronization
import WarmfeedCore

/// Who passes the admin routes: a browser with an open session, or a client
/// that offers the token, at a pace `SignInThrottle` allows its address.
///
/// The throttle's one lock is taken only for a token offered (an admin
/// route's `Bearer`, `/admin?token=`, the sign-in form), never on a reader's
/// path; the sessions keep their own (`AdminSessions`).
package final class AdminDoor: Sendable {
    /// What a request may do.
    enum Access: Equatable {
        /// Come in: an open session, or the right token.
        case open
        /// No session and no right token (the same answer whatever was wrong).
        case refused
        /// Its address offered too many wrong tokens: wait this many seconds.
        case wait(seconds: Int)
    }

    /// The session cookie's name.
    static let cookie = "wf_admin"

    let token: AdminToken
    let sessions: AdminSessions
    let proxies: TrustedProxies
    private let throttle: Mutex<SignInThrottle>

    init(token: AdminToken, sessions: AdminSessions, proxies: TrustedProxies, rules: SignInThrottle.Rules) {
        self.token = token
        self.sessions = sessions
        self.proxies = proxies
        throttle = Mutex(SignInThrottle(rules: rules))
    }

    /// A request to an admin route: its session, else its `Authorization: Bearer`.
    func access(_ request: Request, now: Double) -> Access {
        for id in request.cookies(named: Self.cookie) where sessions.isOpen(id, now: now) { return .open }
        guard let header = request.header(.authorization), header.hasPrefix("Bearer ") else { return .refused }
        return offer([String(header.dropFirst(7))], by: request, now: now)
    }

    /// The tokens `request` offers (exactly one must be given, and right),
    /// checked unless its address must wait. Each one given is compared, so
    /// the time taken does not say which was close.
    func offer(_ offered: [String], by request: Request, now: Double) -> Access {
        let address = proxies.client(of: request)
        return throttle.withLock { throttle in
            if case .wait(let seconds) = throttle.verdict(for: address, now: now) { return .wait(seconds: seconds) }
            var matched = false
            for given in offered where token.matches(given) { matched = true }
            guard matched, offered.count == 1 else {
                throttle.failed(address, now: now)
                return .refused
            }
            throttle.succeeded(address)
            return .open
        }
    }

    /// Whether a form posted by `request` comes from a page of this site:
    /// a browser says where a `POST` comes from (`Sec-Fetch-Site`, `Origin`),
    /// and a form another site posts here (to sign someone out, or in as
    /// anyone) is refused. A client that sends neither is no browser, so no
    /// one's cookies ride with it. The `Origin`'s host is compared with
    /// `Host` without ports (nginx passes `$host`, which has none).
    static func isSameOrigin(_ request: Request) -> Bool {
        if let site = request.header("Sec-Fetch-Site"), site.lowercased() != "same-origin" { return false }
        guard let origin = request.header(.origin) else { return true }
        guard let host = request.header("Host"), let originHost = hostName(origin, scheme: true) else { return false }
        return originHost == hostName(host, scheme: false)
    }

    /// The host of an `Origin` (`scheme://host[:port]`, `scheme` true) or a
    /// `Host` (`host[:port]`), lowercased, without the port; nil for `null`.
    private static func hostName(_ value: String, scheme: Bool) -> String? {
        var rest = Substring(value.lowercased())
        if scheme {
            guard let separator = rest.range(of: "://") else { return nil }
            rest = rest[separator.upperBound...]
        }
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") { return String(rest[...close]) }
        return String(rest.prefix { $0 != ":" && $0 != "/" })
    }
}
