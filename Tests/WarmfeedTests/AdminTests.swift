import Foundation
import HTTPTestClient
import Testing

@testable import Warmfeed

@Suite struct AdminTests {
    @Test func adminRoutesNeedTheToken() async throws {
        try await ServedFeed.with(items: 10) { (feed: ServedFeed) async throws in
            for route in ["/admin", "/admin/cache", "/metrics"] {
                #expect(try await feed.get(route).status == 401, "\(route)")
                #expect(try await feed.get(route, headers: [("Authorization", "Bearer wrong")]).status == 401, "\(route)")
                #expect(try await feed.get(route + "?token=test-admin-token-of-32-character").status == 401, "\(route)")
                #expect(try await feed.get(route, headers: [("Authorization", "Bearer test-admin-token-of-32-characters")]).status == 200, "\(route)")
            }
        }
    }

    @Test func theStatsTheMetricsAndTheDashboardAgree() async throws {
        try await ServedFeed.with(items: 10) { feed in
            let stats = try await feed.adminJSON()
            for key in [
                "memory", "disk", "hits", "misses", "hit_ratio", "coalesced", "evictions", "negative_entries",
                "prewarm", "origin", "thumbnail_latency", "uptime_seconds", "page_hits", "page_misses", "page_not_kept",
            ] where key != "hit_ratio" {
                #expect(stats[key] != nil, "\(key)")
            }
            let memory = stats["memory"] as? [String: Any]
            #expect(memory?["budget_bytes"] as? Int == 256 << 20)
            // Where memory goes: the resident size beside each cache's bytes.
            let use = stats["memory_use"] as? [String: Any]
            #expect((use?["rss_bytes"] as? Int ?? 0) > 1 << 20)
            for key in ["thumbnails_bytes", "originals_bytes", "pages_bytes", "disk_index_bytes", "sqlite_bytes", "demo_origin_bytes"] {
                #expect(use?[key] is Int, "\(key)")
            }
            // The server's connections: this request's own among those held, nothing shed.
            let connections = stats["connections"] as? [String: Any]
            #expect((connections?["held"] as? Int ?? 0) >= 1)
            for key in ["slow_heads", "made_room", "refused", "malformed"] { #expect(connections?[key] as? Int == 0, "\(key)") }
            let metrics = try await feed.get("/metrics", headers: [("Authorization", "Bearer test-admin-token-of-32-characters")])
            #expect(metrics.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
            #expect(metrics.text.contains("warmfeed_thumbnail_hits_total"))
            #expect(metrics.text.contains("warmfeed_memory_budget_bytes 268435456"))
            #expect(metrics.text.contains("warmfeed_connections_shed_for_room 0"))
            #expect(use?["disk_index_budget_bytes"] as? Int == 16 << 20)
            #expect(metrics.text.contains("warmfeed_disk_index_budget_bytes 16777216"))
            #expect(metrics.text.contains("warmfeed_page_cache_hits ") && metrics.text.contains("warmfeed_page_cache_misses "))
            let origin = stats["origin"] as? [String: Any]
            for key in ["busy", "cancelled"] { #expect(origin?[key] as? Int == 0, "\(key)") }
            // A browser's one visit with the token: a session for it, and on to the bare address.
            let session = try await Self.signIn(feed)
            let dashboard = try await feed.get("/admin", headers: [("Cookie", "wf_admin=\(session)")])
            #expect(dashboard.status == 200)
            #expect(dashboard.text.contains("<svg class=\"chart\""))
            // It reads its numbers again by itself, with no meta refresh (axe-core's meta-refresh rule).
            #expect(!dashboard.text.contains("http-equiv=\"refresh\""))
            #expect(dashboard.text.contains("<script src=\"/static/admin.js?v="))
        }
    }

    /// `/admin?token=` once, as a browser: the session cookie it is exchanged for.
    static func signIn(_ feed: ServedFeed, headers: [(String, String)] = []) async throws -> String {
        let exchange = try await feed.get("/admin?token=test-admin-token-of-32-characters", headers: headers)
        #expect(exchange.status == 303 && exchange.header("Location") == "/admin")
        #expect(exchange.header("Cache-Control") == "no-store")
        let cookie = try #require(exchange.header("Set-Cookie"))
        #expect(cookie.hasPrefix("wf_admin=") && cookie.contains("; HttpOnly") && cookie.contains("; SameSite=Strict"), "\(cookie)")
        #expect(!cookie.contains("test-admin-token-of-32-characters"), "the token itself is never the cookie")
        return String(cookie.dropFirst("wf_admin=".count).prefix { $0 != ";" })
    }

    @Test func theTokenIsExchangedForASessionAndStaysOutOfURLsAndCookies() async throws {
        try await ServedFeed.with(items: 10) { feed in
            let session = try await Self.signIn(feed)
            #expect(session.count == 32)
            for route in ["/admin", "/admin/cache", "/metrics"] {
                #expect(try await feed.get(route, headers: [("Cookie", "wf_admin=\(session)")]).status == 200, "\(route)")
                // Neither the token in a cookie nor in the query of any route but the exchange.
                #expect(try await feed.get(route, headers: [("Cookie", "wf_admin=test-admin-token-of-32-characters")]).status == 401, "\(route)")
                let other = session.dropLast() + (session.last == "0" ? "1" : "0")
                #expect(try await feed.get(route, headers: [("Cookie", "wf_admin=\(other)")]).status == 401, "\(route)")
                #expect(try await feed.get(route, headers: [("Authorization", "Bearer test-admin-token-of-32-characters")]).status == 200, "\(route)")
            }
            #expect(try await feed.get("/admin/cache?token=test-admin-token-of-32-characters").status == 401)
            #expect(try await feed.get("/metrics?token=test-admin-token-of-32-characters").status == 401)
            // A wrong token, or the token twice, opens nothing, and every 401 says the same.
            let wrong = try await feed.get("/admin?token=test-admin-token-of-32-characterS")
            let twice = try await feed.get("/admin?token=test-admin-token-of-32-characters&token=test-admin-token-of-32-characters")
            let none = try await feed.get("/admin")
            #expect(wrong.status == 401 && twice.status == 401 && none.status == 401)
            #expect(wrong.header("Set-Cookie") == nil && twice.header("Set-Cookie") == nil)
            #expect(wrong.text == none.text && twice.text == none.text)
            // Behind a TLS front the cookie is Secure; on plain HTTP it cannot be.
            let tls = try await feed.get("/admin?token=test-admin-token-of-32-characters", headers: [("X-Forwarded-Proto", "https")])
            #expect(tls.header("Set-Cookie")?.hasSuffix("; Secure") == true)
            #expect(try await feed.get("/admin?token=test-admin-token-of-32-characters").header("Set-Cookie")?.contains("Secure") == false)
        }
    }

    @Test func metricsCountEventsAsTheyHappenAndAScrapeAddsNoPointToTheChart() async throws {
        let jpeg = try await OriginImages.jpeg()
        try await withOrigin { origin in
            origin.script("/m.jpg", .respond(contentType: "image/jpeg", body: jpeg))
            try await ServedFeed.with(items: 0, configure: { $0.allowedOrigins = ServedFeed.loopbackOrigins }) { feed in
                let auth = [("Authorization", "Bearer test-admin-token-of-32-characters")]
                // The observer samples once as it starts, then every 5 s on its own clock.
                while feed.app.observer.history.hitRatio.points.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
                let points = feed.app.observer.history.hitRatio.points.count
                let start = ContinuousClock.now
                for _ in 0..<20 { _ = try await feed.get("/metrics", headers: auth) }
                let added = feed.app.observer.history.hitRatio.points.count - points
                // The chart's own clock ticks every 5 s: on a loaded machine the 20 scrapes may span
                // more than one tick, never 20 of them.
                let ticks = 1 + Int((ContinuousClock.now - start) / .seconds(5))
                #expect(added <= ticks, "a scrape is not a sample of the chart (\(added) points in \(ticks) ticks of its own clock)")

                let id = try await feed.addItems(imagesAt: ["/m.jpg"], on: origin)[0]
                #expect(try await feed.thumbnail(id).status == 200)  // a miss: fetched and made
                #expect(try await feed.thumbnail(id).status == 200)  // a hit
                let text = try await feed.get("/metrics", headers: auth).text
                for line in [
                    "warmfeed_thumbnail_misses_total 1", "warmfeed_thumbnail_hits_total 1",
                    "warmfeed_thumbnail_origin_fetches_total 1", "warmfeed_thumbnail_origin_errors_total 0",
                ] {
                    #expect(text.contains(line + "\n"), "\(line)")
                }
                #expect(text.contains("warmfeed_origin_fetch_seconds"), "the fetch's time, recorded as it happened")
            }
        }
    }
}
