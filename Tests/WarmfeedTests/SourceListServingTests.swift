import FeedFixtures
import Foundation
import HTTPTestClient
import Testing

@testable import Warmfeed

/// A served river of several sources: the rows, `/admin/sources`, the dashboard.
@Suite struct SourceListServingTests {
    static let token = ("Authorization", "Bearer test-admin-token-of-32-characters")

    static func rss(_ title: String, site: String, ids: [Int]) -> String {
        var xml = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>\(title)</title><link>\(site)</link><description>d</description>"
        for id in ids {
            xml += "<item><guid>p\(id)</guid><title>\(title) post \(id)</title><link>\(site)p\(id)</link>"
            xml += "<pubDate>Tue, 01 Oct 2024 10:\(String(format: "%02d", id)):00 GMT</pubDate></item>"
        }
        return xml + "</channel></rss>"
    }

    @Test func aRiverOfSourcesIsServedAndTheOperatorSeesEverySourceFailingFirst() async throws {
        let origin = try FaultyOrigin()
        origin.script(
            "/b.xml", .respond(contentType: "application/rss+xml", body: Array(Self.rss("Beta &amp; Co", site: "https://beta.example/", ids: [2, 4]).utf8)))
        origin.script("/gone.xml?token=s3cret&page=1", .respond(status: 500, contentType: "text/plain", body: Array("down".utf8)))
        let a = try ImportedFeeds.file(Self.rss("Alpha Weekly", site: "https://alpha.example/", ids: [1, 2, 3]), name: "a.xml")
        let list = try ImportedFeeds.file(
            "\(a)\n\(origin.url("/b.xml"))\nhttp://reader:hunter2@127.0.0.1:\(origin.port)/gone.xml?token=s3cret&page=1\n", name: "list.txt")
        try await ServedFeed.with(items: 0, pageSize: 10, configure: { $0.sources = [list] }) { feed in
            let results = await feed.app.importSources()
            #expect(results.count == 3)
            let page = try await feed.get("/").text
            // Five rows: p2 of each source is its own item.
            #expect(page.components(separatedBy: "<article").count - 1 == 5)
            #expect(
                page.contains("<span class=\"via\"> · from <a href=\"https://alpha.example/\" rel=\"noopener noreferrer nofollow ugc\">Alpha Weekly</a></span>")
            )
            #expect(page.contains("· from <a href=\"https://beta.example/\" rel=\"noopener noreferrer nofollow ugc\">Beta &amp; Co</a>"))

            #expect(try await feed.get("/admin/sources").status == 401)
            let answer = try await feed.get("/admin/sources", headers: [Self.token])
            #expect(answer.status == 200)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])
            let sources = try #require(json["sources"] as? [[String: Any]])
            #expect(sources.count == 3)
            #expect(sources.first?["state"] as? String == "failing", "the failing source first")
            #expect(sources.first?["url"] as? String == "http://***@127.0.0.1:\(origin.port)/gone.xml?token=***&page=1")
            #expect(sources.first?["last_status"] as? Int == 500)
            #expect(sources.first?["consecutive_failures"] as? Int == 1)
            #expect(Set(sources.dropFirst().compactMap { $0["title"] as? String }) == ["Alpha Weekly", "Beta & Co"])
            #expect(sources.dropFirst().allSatisfy { ($0["items"] as? Int ?? 0) > 0 && $0["next_poll_at"] is String })
            let totals = try #require(json["totals"] as? [String: Any])
            #expect(totals["sources"] as? Int == 3)
            #expect(totals["failing"] as? Int == 1)
            #expect(!answer.text.contains("hunter2") && !answer.text.contains("s3cret"))
            let failing = try await feed.get("/admin/sources?failing=1", headers: [Self.token])
            #expect((try JSONSerialization.jsonObject(with: Data(failing.body)) as? [String: Any])?["sources"].map { ($0 as? [Any])?.count } == 1)

            // The dashboard lists them, failing first, in words; /metrics has the totals.
            let dashboard = try await feed.get("/admin", headers: [Self.token]).text
            #expect(dashboard.contains("Sources, failing first"))
            #expect(dashboard.contains("<strong>failing since"))
            #expect(!dashboard.contains("hunter2"))
            let metrics = try await feed.get("/metrics", headers: [Self.token]).text
            #expect(metrics.contains("warmfeed_sources_listed 3"))
            #expect(metrics.contains("warmfeed_sources_failing 1"))
        }
    }
}
