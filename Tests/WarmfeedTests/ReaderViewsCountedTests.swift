import Foundation
import HTTPTestClient
import Testing

@testable import Warmfeed

/// The operator sees how many readers' page views pre-warm heard, and how
/// many it let go because a server thread recorded more between two drains
/// than its ring holds (`/admin/cache`'s `prewarm.views`, `views_dropped`).
@Suite struct ReaderViewsCountedTests {
    @Test func aReadersViewsAreCountedAndACrawlersAreNot() async throws {
        try await ServedFeed.with(items: 40, pageSize: 5) { feed in
            func views() async throws -> (heard: Int, dropped: Int) {
                let prewarm = try await feed.adminJSON()["prewarm"] as? [String: Any]
                return (prewarm?["views"] as? Int ?? -1, prewarm?["views_dropped"] as? Int ?? -1)
            }
            let before = try await views()
            #expect(before.heard >= 0 && before.dropped == 0)
            // A crawler (no cookie, not navigating) is not followed.
            for page in 1...3 { #expect(try await feed.get("/fragment?page=\(page)").status == 200) }
            #expect(try await views().heard == before.heard)
            // A reader with the cookie is, a view a page.
            let reader = [("Cookie", "wf=00000000feedbeef"), ("Sec-CH-DPR", "1")]
            for page in 1...3 { #expect(try await feed.get("/fragment?page=\(page)", headers: reader).status == 200) }
            let after = try await views()
            #expect(after.heard == before.heard + 3)
            #expect(after.dropped == 0)
        }
    }
}
