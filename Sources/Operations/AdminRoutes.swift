import Foundation
import HTTPServer
import WarmfeedCore

/// The operator's views: `/admin/cache` (JSON), `/admin` (dashboard), `/metrics` (Prometheus).
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

    package init(
        token: AdminToken, sessions: AdminSessions = AdminSessions(), trustedProxies: TrustedProxies = .none,
        signInRules: SignInThrottle.Rules = .init(), clock: Uptime, observer: CacheObserver, dashboard: DashboardPage, pageHeaders: [HTTPField]
    ) {
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

    private func guarded(_ request: Request, _ answer: () -> Reply) -> Reply {
        switch door.access(request, now: clock.now) {
        case .open: answer()
        case .refused: .now(refusal(request, status: 401, message: nil))
        case .wait(let seconds): .now(refusal(request, status: 429, message: Self.waitMessage(seconds), retryAfter: seconds))
        }
    }

    private func dashboard() -> [UInt8] {
        let stats = observer.stats()
        let history = observer.history
        func mb(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1_048_576) }
        func ms(_ value: Double?) -> String { value.map { String(format: "%.0f ms", $0) } ?? "–" }
        func percent(_ value: Double?) -> String { value.map { String(format: "%.1f%%", $0 * 100) } ?? "–" }
        let store = stats.store
        let rows: [[String: String]] =
            [
                [
                    "name": "Store",
                    "value": "\(store.backend) at \(store.location), revision \(store.revision): "
                        + (store.answering ? "answering" : "DOWN (\(store.problem ?? "not answering")): cached pages only, others get 503"),
                ],
                ["name": "Memory", "value": "\(stats.memory.entries) thumbnails, \(mb(stats.memory.bytes)) of \(mb(stats.memory.budgetBytes))"],
                [
                    "name": "Disk",
                    "value":
                        "\(stats.disk.entries) thumbnails (at most \(stats.diskMaxEntries)), \(mb(stats.disk.bytes)) of \(mb(stats.disk.budgetBytes)); \(stats.diskCorruptFilesReplaced) corrupt files replaced",
                ],
                [
                    "name": "Rendered pages",
                    "value":
                        "\(stats.pages.entries), \(mb(stats.pages.bytes)) of \(mb(stats.pages.budgetBytes)); readers' requests: \(stats.pageHits) from the cache, \(stats.pageMisses) rendered (\(stats.pageNotKept) of them not kept: asked for once)",
                ],
                ["name": "Hit ratio", "value": "\(percent(stats.hitRatio)) (\(stats.hits) hits, \(stats.misses) misses, \(stats.coalesced) coalesced)"],
                ["name": "Evictions", "value": "\(stats.evictions)"],
                ["name": "Disk hits", "value": "\(stats.diskHits)"],
                ["name": "Negative cache", "value": "\(stats.negativeEntries) entries, \(stats.negativeHits) hits, \(stats.failures) failures"],
                [
                    "name": "Pre-warm",
                    "value":
                        "\(stats.prewarm.queued) queued, \(stats.prewarm.running) running, \(stats.prewarm.done) done, \(stats.prewarm.cancelled) cancelled, \(stats.prewarm.dropped) dropped; \(stats.prewarm.readers) readers; page 1 \(stats.prewarm.pageOneWarmSeconds.map { "warm after \(String(format: "%.1f", $0)) s" } ?? "not warm yet"); leads \(stats.prewarm.leads.isEmpty ? "none" : stats.prewarm.leads.sorted { Int($0.key) ?? 0 < Int($1.key) ?? 0 }.map { "\($0.key) pages × \($0.value)" }.joined(separator: ", ")); a page warms in \(stats.prewarm.pageWarmSeconds.map { String(format: "%.2f s", $0) } ?? "—"); AVIF: \(stats.prewarm.avifPagesWaiting) pages waiting for spare CPU, \(stats.prewarm.avifPagesDropped) let go",
                ],
                [
                    "name": "Origin",
                    "value":
                        "\(stats.origin.fetches) fetches, \(stats.origin.errors) errors, \(stats.origin.inFlight) in flight; p50 \(ms(stats.origin.latency.p50Ms)), p99 \(ms(stats.origin.latency.p99Ms))",
                ],
                ["name": "Thumbnailing", "value": "p50 \(ms(stats.thumbnailLatency.p50Ms)), p99 \(ms(stats.thumbnailLatency.p99Ms))"],
                [
                    "name": "Memory use",
                    "value":
                        "\(stats.memoryUse.rssBytes.map(mb) ?? "–") resident: thumbnails \(mb(stats.memoryUse.thumbnailsBytes)), originals \(mb(stats.memoryUse.originalsBytes)), pages \(mb(stats.memoryUse.pagesBytes)), disk index \(mb(stats.memoryUse.diskIndexBytes)) of \(mb(stats.memoryUse.diskIndexBudgetBytes)), SQLite \(mb(stats.memoryUse.sqliteBytes)), demo origin \(mb(stats.memoryUse.demoOriginBytes)), connections \(mb(stats.memoryUse.connectionsBytes)); anonymous \(stats.memoryUse.anonymousBytes.map(mb) ?? "–"), files \(stats.memoryUse.fileBytes.map(mb) ?? "–"), \(stats.memoryUse.threads.map(String.init) ?? "–") threads; allocator: \(stats.memoryUse.allocator.map { "\(mb($0.inUseBytes)) in use, \(mb($0.freeBytes)) free in its arenas" } ?? "–")",
                ],
                ["name": "Up", "value": String(format: "%.0f s", stats.uptimeSeconds)],
            ]
            + (stats.shared.map { shared in
                let size = shared.keys.map { "\($0) keys, " } ?? ""
                let bytes =
                    shared.bytes.map { mb($0) + (shared.maxBytes.map { $0 > 0 ? " of \(mb($0))" : " (no maxmemory: set one, see deploy/redis.conf)" } ?? "") }
                    ?? "size unknown"
                let health =
                    shared.up
                    ? "answering"
                    : "DOWN: Redis cannot be reached (\(shared.problem ?? "no answer")); serving from this node's own tiers until it answers"
                return [
                    ["name": "Node", "value": stats.node],
                    ["name": "Shared tier", "value": "\(shared.location): \(health); \(size)\(bytes)"],
                    [
                        "name": "Shared hits",
                        "value":
                            "\(shared.hits) thumbnails, \(shared.failedHits) remembered failures, \(shared.misses) misses; \(shared.writes) written; hit p50 \(ms(shared.latency.p50Ms)), p99 \(ms(shared.latency.p99Ms)); \(shared.errors) Redis errors",
                    ],
                    [
                        "name": "Claims",
                        "value":
                            "\(shared.claimsWon) won (made here: \(stats.resizes) resizes), \(shared.claimsWaited) waited on another node, \(shared.claimsTakenOver) taken over from a node gone, \(shared.claimsUnavailable) made without a claim (Redis down or slow); pages: \(shared.pagesClaimed) warmed here, \(shared.pagesWarmedElsewhere) warmed by another node",
                    ],
                ]
            } ?? [])
            + (stats.source.map { source in
                let every = source.refreshSeconds.map { String(format: ", every %.0f s", $0) } ?? ""
                let last =
                    source.lastError.map { "failed: \($0)" }
                    ?? "\(source.lastInserted) new, \(source.lastUpdated) updated, \(source.lastProblems) problems"
                return [
                    [
                        "name": "Source",
                        "value":
                            "\(source.source)\(every)\(source.polledElsewhere ? " (polled by another server now)" : ""): \(source.imports) imports (\(source.notModified) not modified), \(source.failures) failed; last \(source.lastImportAt ?? "never"), \(last)",
                    ]
                ]
            } ?? [])
        return dashboardPage.render(
            rows: rows.map { (name: $0["name"] ?? "", value: $0["value"] ?? "") },
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
