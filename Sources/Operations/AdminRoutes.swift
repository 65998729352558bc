import Foundation
import HTTPServer
import WarmfeedCore

/// The operator's views: `/admin/cache` (JSON), `/admin/sources` (every
/// source, JSON), `/admin` (dashboard), `/metrics` (Prometheus).
///
/// Every admin route needs the token: `Authorization: Bearer <token>` (for
/// scripts), or a session a browser got for it. A browser that opens `/admin`
/// without one is shown a sign-in form, which posts the token (in the body,
/// never in a URL) to `/admin/sign-in`; the token is exchanged for a session
/// cookie (`HttpOnly`, `SameSite=Strict`, `Secure` behind TLS) and the
/// browser is sent on to `/admin`. `/admin?token=<token>` does the same for
/// a browser on the server itself (behind the shipped nginx it is never
/// passed on: a URL is in every log line about its request). `POST
/// /admin/sign-out` ends the session. Wrong tokens are slowed per address
/// (`SignInThrottle`: 429 with `Retry-After`). Without a session or the
/// token: 401, the same whatever was wrong.
package struct AdminRoutes: Sendable {
    let door: AdminDoor
    let clock: Uptime
    let observer: CacheObserver
    let dashboardPage: DashboardPage
    /// The site's own headers (its content security policy), which the dashboard's answer carries too.
    let pageHeaders: [HTTPField]
    /// Every source, for `/admin/sources` (nil without `--source`: an empty list).
    let sources: (any SourceListing)?

    package init(
        token: AdminToken, sessions: AdminSessions = AdminSessions(), trustedProxies: TrustedProxies = .none,
        signInRules: SignInThrottle.Rules = .init(), clock: Uptime, observer: CacheObserver, dashboard: DashboardPage, pageHeaders: [HTTPField],
        sources: (any SourceListing)? = nil
    ) {
        self.sources = sources
        self.door = AdminDoor(token: token, sessions: sessions, proxies: trustedProxies, rules: signInRules)
        self.clock = clock
        self.observer = observer
        self.dashboardPage = dashboard
        self.pageHeaders = pageHeaders
    }

    package func add(to router: inout Router) {
        router.get("/admin/cache") { request in
            guarded(request) {
                .now(
                    Response(
                        status: 200, headers: [HTTPField("Content-Type", "application/json"), HTTPField("Cache-Control", "no-store")],
                        body: ResponseBytes(observer.stats().json())))
            }
        }
        router.get("/admin/sources") { request in
            guarded(request) { .now(sourceList(request)) }
        }
        router.get("/metrics") { request in
            guarded(request) {
                .now(
                    Response(
                        status: 200, headers: [HTTPField("Content-Type", "text/plain; version=0.0.4; charset=utf-8"), HTTPField("Cache-Control", "no-store")],
                        body: ResponseBytes(observer.scrape())))
            }
        }
        router.get("/admin") { request in
            if !request.queryValues("token").isEmpty { return .now(signIn(request, offering: request.queryValues("token"))) }
            return guarded(request) {
                .now(.html(200, ResponseBytes(dashboard()), headers: pageHeaders + [HTTPField("Cache-Control", "no-store")]))
            }
        }
        router.post("/admin/sign-in") { request in
            guard AdminDoor.isSameOrigin(request) else { return .now(Self.crossSite) }
            return .now(signIn(request, offering: request.formValues("token")))
        }
        router.post("/admin/sign-out") { request in .now(signOut(request)) }
    }

    /// `/admin/sources`: every source, failing first, with the totals;
    /// `?failing=1` only those failing, `?limit=N` the first N.
    private func sourceList(_ request: Request) -> Response {
        var listed = sources?.sourceStatuses() ?? []
        if request.queryValues("failing").first == "1" { listed = listed.filter { $0.severity < 2 } }
        if let limit = request.queryValues("limit").first.flatMap(Int.init), limit >= 0 { listed = Array(listed.prefix(limit)) }
        var totals = observer.stats().source
        totals?.shown = []
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys]
        let body = (try? encoder.encode(SourceList(sources: listed, totals: totals))) ?? Data("{}".utf8)
        return Response(
            status: 200, headers: [HTTPField("Content-Type", "application/json"), HTTPField("Cache-Control", "no-store")],
            body: ResponseBytes(Array(body)))
    }

    private struct SourceList: Encodable {
        var sources: [SourceStatus]
        var totals: RefreshStatus?
    }

    private func guarded(_ request: Request, _ answer: () -> Reply) -> Reply {
        switch door.access(request, now: clock.now) {
        case .open: answer()
        case .refused: .now(refusal(request, status: 401, message: nil))
        case .wait(let seconds): .now(refusal(request, status: 429, message: Self.waitMessage(seconds), retryAfter: seconds))
        }
    }

    /// The dashboard: every number of the stats, as `admin.mustache` writes them, and two charts.
    private func dashboard() -> [UInt8] {
        let history = observer.history
        return dashboardPage.render(
            observer.stats(),
            hitChart: Self.chart(history.hitRatio, maximum: 1, label: "hit ratio"),
            latencyChart: Self.chart(history.originP50, maximum: nil, label: "origin p50 (ms)"))
    }

    /// A small server-rendered SVG line chart of a series (no script needed).
    static func chart(_ series: TimeSeries, maximum: Double?, label: String) -> String {
        let width = 560.0
        let height = 120.0
        let values = series.points.compactMap(\.value)
        let top = maximum ?? max(1, (values.max() ?? 1) * 1.1)
        guard let first = series.points.first?.time, let last = series.points.last?.time, last > first else {
            return
                "<svg class=\"chart\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"\(label): no data yet\"><text x=\"10\" y=\"60\">no data yet</text></svg>"
        }
        let points = series.points.compactMap { point -> String? in
            guard let value = point.value else { return nil }
            let x = (point.time - first) / (last - first) * width
            let y = height - min(1, value / top) * (height - 10) - 5
            return String(format: "%.1f,%.1f", x, y)
        }.joined(separator: " ")
        return """
            <svg class="chart" viewBox="0 0 \(Int(width)) \(Int(height))" role="img" aria-label="\(label)">\
            <line x1="0" y1="5" x2="\(Int(width))" y2="5" class="grid"/><line x1="0" y1="\(Int(height) - 5)" x2="\(Int(width))" y2="\(Int(height) - 5)" class="grid"/>\
            <polyline points="\(points)" class="line"/><text x="4" y="16">\(String(format: maximum == nil ? "%.0f" : "%.2f", top)) \(label)</text></svg>
            """
    }
}
