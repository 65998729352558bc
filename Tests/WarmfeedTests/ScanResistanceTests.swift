import Foundation
import Testing

@testable import Warmfeed

/// A crawler walking every page once must not flush the pages readers are on
/// (issue 10): the real server, a real crawl through the sentinel links, and
/// the page cache's own counters in /admin/cache.
@Suite struct ScanResistanceTests {
    @Test func aCrawlerWalkingEveryPageLeavesTheReadersPagesInTheCache() async throws {
        // 50,000 items at 10 a page: 5,000 pages of ~8 KB; the page cache holds about 50 of them.
        try await ServedFeed.with(items: 50_000, pageSize: 10, configure: { $0.pages.cacheBytes = 400 << 10 }) { feed in
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

    @Test func onceTheCacheIsFullAPageAskedForOnceIsNotKeptAndOnItsSecondAskIs() async throws {
        // About 8 pages of ~8 KB fit.
        try await ServedFeed.with(
            items: 2_000, pageSize: 10,
            configure: {
                $0.prewarm.pages = 0; $0.pages.cacheBytes = 64 << 10
            }
        ) { feed in
            func counts() async throws -> (hits: Int, misses: Int, notKept: Int) {
                let stats = try await feed.adminJSON()
                return (stats["page_hits"] as? Int ?? -1, stats["page_misses"] as? Int ?? -1, stats["page_not_kept"] as? Int ?? -1)
            }
            // Below its budget, the cache keeps every page it renders.
            let empty = try await counts()
            _ = try await feed.get("/fragment?page=2")
            _ = try await feed.get("/fragment?page=2")
            let roomy = try await counts()
            #expect(roomy.hits - empty.hits == 1 && roomy.notKept == 0, "\(empty) -> \(roomy)")
            // Filled past its budget, it evicts, and from then on a page earns its place.
            for page in 3...30 { _ = try await feed.get("/fragment?page=\(page)") }
            for (target, headers) in [("/fragment?page=50", [(String, String)]()), ("/?page=60", []), ("/fragment?page=70", [("Accept-Encoding", "gzip")])] {
                let start = try await counts()
                let first = try await feed.get(target, headers: headers)
                let once = try await counts()
                #expect(once.misses - start.misses == 1 && once.notKept - start.notKept == 1, "\(target): \(start) -> \(once)")
                let second = try await feed.get(target, headers: headers)
                let twice = try await counts()
                #expect(twice.misses - once.misses == 1 && twice.notKept == once.notKept, "\(target): \(once) -> \(twice)")
                let third = try await feed.get(target, headers: headers)
                let thrice = try await counts()
                #expect(thrice.hits - twice.hits == 1 && thrice.misses == twice.misses, "\(target): \(twice) -> \(thrice)")
                // Kept or not, the reader got the same page each time.
                #expect(first.status == 200 && first.body == second.body && second.body == third.body, "\(target)")
            }
        }
    }
}
