import Foundation
import Testing
@testable import Warmfeed

/// A crawler walking every page once must not flush the pages readers are on
/// (issue 10): the real server, a real crawl through the sentinel links, and
/// the page cache's own counters in /admin/cache.
@Suite struct ScanResistanceTests {
    @Test func aCrawlerWalkingEveryPageLeavesTheReadersPagesInTheCache() async throws {
        // 50,000 items at 10 a page: 5,000 pages of ~8 KB; the page cache holds about 50 of them.
        try await ServedFeed.with(items: 50_000, pageSize: 10, configure: { $0.pageCacheBytes = 400 << 10 }) { feed in
            let before = try await feed.adminJSON()
            var next: String? = "/fragment"
            var crawled = 0
            var readerRequests = 0
            while let target = next {
                // The crawler, with no cookie, takes the next page by the sentinel's link.
                let page = try await feed.get(target)
                #expect(page.status == 200, "\(target)")
                next = RenderedPage(page.text).sentinel?.fragment
                crawled += 1
                // Every second crawled page, a reader reads one of the first 20 pages again:
                // between two reads of one page the crawler brings ~40 new ones, more than the
                // cache holds, so a plain LRU would have dropped it every time.
                if crawled % 2 == 0 {
                    let read = try await feed.get("/?page=\(readerRequests % 20 + 1)")
                    #expect(read.status == 200)
                    readerRequests += 1
                }
            }
            #expect(crawled == 5000)
            let after = try await feed.adminJSON()
            let hits = try #require(after["page_hits"] as? Int) - (before["page_hits"] as? Int ?? 0)
            let misses = try #require(after["page_misses"] as? Int) - (before["page_misses"] as? Int ?? 0)
            #expect(hits + misses == crawled + readerRequests)
            // Each crawled page is asked for once, so every hit is a reader's.
            let readerHitRatio = Double(hits) / Double(readerRequests)
            #expect(readerHitRatio >= 0.95, "readers' page-cache hit ratio \(readerHitRatio): \(hits) of \(readerRequests)")
        }
    }
}
