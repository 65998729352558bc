import Foundation
import HTTPTestClient
import Testing

@testable import Warmfeed
@testable import WarmfeedCore

/// Pre-warm makes a reader's pages in the size that reader's screen loads,
/// as its browser says (`Sec-CH-DPR`, asked for with `Accept-CH`): a plain
/// screen's pages cost no 2x, even while dense screens read on the same node.
@Suite struct ReaderScreenTests {
    /// The variants pre-warm has made so far, read from the disk tier's files ("12-1x.webp").
    static func made(in folder: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder + "/thumbs")) ?? []
        return names.filter { !$0.hasPrefix(".") }
    }

    func waitUntilIdle(_ feed: ServedFeed) async throws {
        for _ in 0..<300 {
            let stats = try await feed.adminJSON()
            let prewarm = stats["prewarm"] as? [String: Any]
            if stats["in_flight"] as? Int == 0, prewarm?["running"] as? Int == 0, prewarm?["queued"] as? Int == 0 { return }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @Test func theDocumentAsksForThePixelRatio() async throws {
        try await ServedFeed.with(items: 20, pageSize: 5) { feed in
            let document = try await feed.get("/")
            #expect(document.header("Accept-CH") == "Sec-CH-DPR")
        }
    }

    @Test(arguments: [("1", "1x", "2x"), ("2.625", "2x", "1x")])
    func aReadersPagesAreWarmedInTheSizeTheirScreenLoads(ratio: String, wanted: String, unwanted: String) async throws {
        try await ServedFeed.with(
            items: 200, pageSize: 5,
            configure: {
                $0.prewarm.pages = 2; $0.prewarm.pageOneHold = .zero
            }
        ) { feed in
            try await waitUntilIdle(feed)
            // Somebody on a dense screen is about: this node has been asked for a 2x.
            _ = try await feed.thumbnail(200, "2x")
            _ = try await feed.thumbnail(200, "1x")
            // Written to disk after their answers: wait for them, so they are not counted as pre-warm's.
            for _ in 0..<200 where !Set(Self.made(in: feed.dataFolder)).isSuperset(of: ["200-1x.webp", "200-2x.webp"]) {
                try await Task.sleep(for: .milliseconds(50))
            }
            let before = Set(Self.made(in: feed.dataFolder))
            let reader = [("Cookie", "wf=00000000feedbeef"), ("Sec-CH-DPR", ratio)]
            for page in 10...12 {
                #expect(try await feed.get("/fragment?page=\(page)", headers: reader).status == 200)
                try await waitUntilIdle(feed)
            }
            let warmed = Set(Self.made(in: feed.dataFolder)).subtracting(before)
            #expect(warmed.count >= 10, "pre-warm made \(warmed.sorted())")
            #expect(warmed.allSatisfy { $0.contains("-\(wanted).") }, "made: \(warmed.sorted())")
            #expect(!warmed.contains { $0.contains("-\(unwanted).") })
        }
    }
}
