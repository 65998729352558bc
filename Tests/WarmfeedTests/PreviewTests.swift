import Foundation
import Testing
import Thumbnailer

@testable import FeedPages
@testable import Thumbnails
@testable import Warmfeed
@testable import WarmfeedCore

/// Each picture's preview is kept with its item and painted in its row, so a
/// page shows the pictures' colours even when no thumbnail is cached.
@Suite struct PreviewTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func feedCssHoldsEveryPaletteClass() async throws {
        let css = try String(contentsOf: Self.repository.appendingPathComponent("Public/feed.css"), encoding: .utf8)
        #expect(css.hasSuffix(PreviewPalette.css), "regenerate feed.css's palette from PreviewPalette.css")
        #expect(PreviewPalette.hex(0) == "#000" && PreviewPalette.hex(215) == "#fff" && PreviewPalette.hex(PreviewPalette.index((255, 0, 0))) == "#f00")
        // Every colour is within half a step (25.5) of its palette entry on every channel.
        for value in stride(from: 0, through: 255, by: 5) {
            let level = Int(PreviewPalette.hex(PreviewPalette.index((UInt8(value), 0, 0))).dropFirst().prefix(1), radix: 16)! * 17
            #expect(abs(level - value) <= 26)
        }
    }

    // The store keeping previews through imports is in FeedStoreConformanceTests, for every backend.

    @Test func aThumbnailMadeOnceLeavesItsPreviewInTheRowsRenderedAfter() async throws {
        try await ServedFeed.with(items: 40, pageSize: 10, configure: { $0.prewarm.pages = 0 }) { feed in
            #expect(!(try await feed.get("/?page=4").text.contains("class=\"thumb pv")), "no thumbnail made yet, no preview")
            // An item of page 3, which no one has asked for yet.
            let id = try #require(try await feed.app.store.page(.number(3), size: 10)?.items.first?.id)
            #expect(try await feed.thumbnail(id).status == 200)
            let stored = try #require(try await Self.keptPreview(of: id, in: feed))
            let preview = ThumbnailPreview(packed: stored)
            let expected = "class=\"thumb pv pa\(PreviewPalette.index(preview.top)) pb\(PreviewPalette.index(preview.bottom))\""
            let fresh = try await feed.get("/?page=3").text
            #expect(fresh.contains(expected), "row \(id) should carry \(expected)")
            // A page kept before the preview was (page 4's rows await theirs) is rendered again with it.
            let pageFour = try #require(try await feed.app.store.page(.number(4), size: 10)?.items.first?.id)
            #expect(try await feed.thumbnail(pageFour).status == 200)
            _ = try await Self.keptPreview(of: pageFour, in: feed)
            #expect(try await feed.get("/?page=4").text.contains("class=\"thumb pv"), "page 4 still without its preview")
        }
    }

    /// Item `id`'s preview once it is in the store (the keeper writes once a second; this also asks it to now).
    static func keptPreview(of id: Int64, in feed: ServedFeed) async throws -> Int64? {
        for _ in 0..<100 {
            await feed.app.previews.flush()
            if let preview = try await feed.app.store.item(id: id)?.preview { return preview }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }
}
