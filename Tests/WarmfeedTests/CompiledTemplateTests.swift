import Foundation
import HTMLTemplates
import Mustache
import Testing
import Thumbnailer
import WarmfeedCore

@testable import FeedPages
@testable import Operations
@testable import Warmfeed

/// The compiled page templates against swift-mustache, the renderer they
/// replace: for a corpus of pages, byte for byte the same HTML.
///
/// The reference below is the dictionary-building code the server used
/// before, kept here as the oracle.
@Suite struct CompiledTemplateTests {
    static let templates = ServedFeed.repository.appendingPathComponent("Templates").path

    /// Today's renderer, as the server builds it.
    func compiled() throws -> PageRenderer {
        try PageRenderer(
            templatesFolder: Self.templates, scriptURL: "/static/feed.js?v=abc", styleURL: "/static/feed.css?v=d&e", threshold: 0.7, epoch: Self.epoch)
    }

    /// The store epoch the pages are rendered in (the cursors' too).
    static let epoch: UInt32 = 7

    /// The swift-mustache rendering the compiled templates replace.
    struct Reference {
        let library: MustacheLibrary
        let threshold = 0.7

        func fragment(of page: Page, query: PageQuery, number: Int) -> String {
            let rows = page.items.enumerated().map { offset, item in
                row(item, position: page.firstPosition + offset, total: page.total, pageStart: offset == 0 ? (number, query.documentURL) : nil)
            }
            let split = Sentinel.rowsBefore(rowCount: rows.count, threshold: threshold)
            var context: [String: Any] = [:]
            if let older = page.older {
                let next = PageQuery(request: .after(older), number: number + 1)
                context["before"] = Array(rows[..<split])
                context["after"] = Array(rows[split...])
                context["sentinel"] = ["next": next.documentURL, "fragment": next.fragmentURL, "nextNumber": number + 1] as [String: Any]
            } else {
                context["before"] = rows
                context["end"] = ["empty": page.items.isEmpty]
            }
            return library.render(context, withTemplate: "page") ?? ""
        }

        /// A document's first five thumbnails are fetched first, not lazily (issue 25).
        static func firstScreen(_ fragment: String) -> String {
            let parts = fragment.components(separatedBy: " loading=\"lazy\"")
            var text = parts[0]
            for (index, part) in parts.dropFirst().enumerated() { text += (index < 5 ? " fetchpriority=\"high\"" : " loading=\"lazy\"") + part }
            return text
        }

        func document(fragment: String, page: Page, number: Int) -> String {
            var context: [String: Any] = [
                "title": number == 1 ? "Warmfeed" : "Warmfeed · page \(number)",
                "css": "/static/feed.css?v=d&e",
                "js": "/static/feed.js?v=abc",
                "fragment": Self.firstScreen(fragment),
            ]
            if number > 1 { context["pageNumber"] = String(number) }
            if let newer = page.newer { context["newer"] = PageQuery(request: .before(newer), number: max(1, number - 1)).documentURL }
            if let older = page.older {
                context["next"] = PageQuery(request: .after(older), number: number + 1).documentURL
                context["nextNumber"] = String(number + 1)
            }
            return library.render(context, withTemplate: "layout") ?? ""
        }

        private func row(_ item: FeedItem, position: Int, total: Int, pageStart: (number: Int, url: String)?) -> [String: Any] {
            let id = item.id ?? 0
            var row: [String: Any] = [
                "id": id, "position": position, "total": total, "title": item.title,
                "colour": item.preview.map { packed -> String in
                    let preview = ThumbnailPreview(packed: packed)
                    return "pv pa\(PreviewPalette.index(preview.top)) pb\(PreviewPalette.index(preview.bottom))"
                } ?? "c\(Int((UInt64(bitPattern: id) &* 0x9e37_79b9_7f4a_7c15) >> 61))",
                "iso": Timestamp.iso(item.published), "date": Timestamp.display(item.published),
            ]
            if !item.summary.isEmpty { row["summary"] = item.summary }
            if item.imageURL != nil { row["thumb"] = true }
            if let picture = Picture(item: item, epoch: CompiledTemplateTests.epoch) { row["picture"] = picture.name }
            if let link = item.link, PageRenderer.isSafeLink(link) { row["link"] = link }
            if let pageStart {
                row["pageStart"] = true
                row["number"] = pageStart.number
                row["url"] = pageStart.url
            }
            return row
        }
    }

    /// Items as the store may hold them: demo rows and hostile imports.
    static func corpusItems() -> [FeedItem] {
        var items = DemoFeed.items(count: 40).enumerated().map { index, item in
            var item = item
            item.id = Int64(index + 1)
            // Every third with a picture's preview kept, from black to white.
            if index % 3 == 0 { item.preview = Int64(index) * 0x0610_1806_1018 & 0xFFFF_FFFF_FFFF }
            return item
        }
        let hostile: [(String, String, String?, String?)] = [
            (#"<script>alert("x")</script> & 'quotes'"#, "<b>bold</b> &amp; entity", "https://example.com/?a=1&b=<2>", "https://img.example/1.jpg"),
            ("Ünïcödé — 東京 🚀 e\u{301}", "", "javascript:alert(1)", nil),
            ("", "summary only", nil, "https://img.example/2.jpg"),
            ("title", "tab\tnew\nline", "HTTP://EXAMPLE.COM/x\"y", nil),
            ("link with a control", "x", "https://e.com/\u{7}", nil),
            (String(repeating: "a<&>'\"", count: 1 << 18), String(repeating: "ß", count: 1000), "https://e.com", "https://img.example/3.png"),
        ]
        for (offset, (title, summary, link, image)) in hostile.enumerated() {
            items.append(
                FeedItem(
                    id: Int64(1000 + offset), guid: "hostile-\(offset)", title: title, summary: summary, link: link, imageURL: image,
                    published: [-62_135_596_800_000, 0, 1_800_000_000_123, 253_402_300_799_000, 1_000, 86_399_999][offset]))
        }
        return items
    }

    static func pages() -> [(Page, PageQuery, Int)] {
        let items = corpusItems()
        let cursor = { (id: Int64) in Cursor(epoch: 7, published: 1_700_000_000_000, id: id) }
        var pages: [(Page, PageQuery, Int)] = []
        // Pages of 30, 10, 1 and the hostile rows, first, middle and last.
        for (start, size) in [(0, 30), (30, 10), (40, 6), (5, 1), (0, 46)] {
            let slice = Array(items[start..<min(items.count, start + size)])
            for (older, newer, number) in [(cursor(9), nil, 1), (cursor(9), cursor(3), 17), (nil, cursor(3), 123_456)] as [(Cursor?, Cursor?, Int)] {
                let page = Page(items: slice, total: 1_000_000, firstPosition: 1 + start, older: older, newer: newer)
                let query = number == 1 ? PageQuery(request: .number(1), number: 1) : PageQuery(request: .after(cursor(42)), number: number)
                pages.append((page, query, number))
            }
        }
        // The empty feed's only page.
        pages.append((Page(items: [], total: 0, firstPosition: 0, older: nil, newer: nil), PageQuery(request: .number(1), number: 1), 1))
        return pages
    }

    /// Where `bytes` and `expected` first differ, with a little of each around it (pages hold 1 MB titles).
    static func difference(_ bytes: [UInt8], _ expected: String) -> String? {
        let want = Array(expected.utf8)
        guard bytes != want else { return nil }
        let at = (0..<min(bytes.count, want.count)).first { bytes[$0] != want[$0] } ?? min(bytes.count, want.count)
        let window = { (b: [UInt8]) in String(decoding: b[max(0, at - 60)..<min(b.count, at + 60)], as: UTF8.self) }
        return "at byte \(at) of \(bytes.count) (expected \(want.count)): \(window(bytes)) | expected: \(window(want))"
    }

    @Test func fragmentsAndDocumentsAreByteForByteWhatSwiftMustacheRendered() async throws {
        let renderer = try compiled()
        let reference = Reference(library: try await MustacheLibrary(directory: Self.templates))
        var compared = 0
        for (page, query, number) in Self.pages() {
            let fragment = renderer.fragment(of: page, query: query, number: number)
            let expected = reference.fragment(of: page, query: query, number: number)
            #expect(Self.difference(fragment, expected) == nil, "fragment of page \(number), \(page.items.count) items")
            let document = renderer.document(fragment: fragment, page: page, number: number)
            #expect(
                Self.difference(document, reference.document(fragment: expected, page: page, number: number)) == nil,
                "document of page \(number), \(page.items.count) items")
            compared += 1
        }
        #expect(compared == 16)
    }

    @Test func aTemplateWithAnErrorStopsTheStartWithItsFileAndLine() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("templates-\(UUID().uuidString)")
        try FileManager.default.copyItem(atPath: Self.templates, toPath: folder.path)
        defer { try? FileManager.default.removeItem(at: folder) }
        let row = folder.appendingPathComponent("row.mustache")
        var text = try String(contentsOf: row, encoding: .utf8)
        text = text.replacingOccurrences(of: "{{/link}}{{^link}}", with: "{{/lnk}}{{^link}}")
        try text.write(to: row, atomically: true, encoding: .utf8)
        #expect {
            try PageRenderer(templatesFolder: folder.path, scriptURL: "/a.js", styleURL: "/a.css", threshold: 0.7, epoch: Self.epoch)
        } throws: { error in
            guard let error = error as? TemplateError else { return false }
            return error.file.hasSuffix("row.mustache") && error.line == 4 && error.message.contains("{{/lnk}} closes {{#link}}")
        }
    }

    /// The error page and the dashboard, rendered rarely, left swift-mustache
    /// for the same compiled templates: the same bytes for hostile messages
    /// and rows, and for a dashboard with no rows.
    @Test func errorPagesAndTheDashboardAreByteForByteWhatSwiftMustacheRendered() async throws {
        let renderer = try compiled()
        let library = try await MustacheLibrary(directory: Self.templates)
        let hostile = #"<script>alert("x")</script> & 'quotes' — 東京 🚀"#
        for (status, message) in [(404, "no such page"), (400, hostile), (503, ""), (418, String(repeating: "<&>", count: 5000))] {
            let expected =
                library.render(
                    ["status": status, "reason": PageRenderer.reason(status), "message": message, "css": renderer.styleURL] as [String: Any],
                    withTemplate: "error") ?? ""
            #expect(Self.difference(renderer.errorDocument(status: status, message: message), expected) == nil, "error page \(status)")
        }
        let dashboardPage = try DashboardPage(templatesFolder: Self.templates, styleURL: renderer.styleURL, scriptURL: "/static/admin.js?v=1")
        let chart = #"<svg class="chart" role="img" aria-label="a&b"><text x="1">1 < 2</text></svg>"#
        // Every number present (so swift-mustache, which has no "absent but written as –", reads the same values),
        // words hostile, and each flag both ways.
        for up in [false, true] {
            let stats = Self.everyNumber(words: hostile, up: up)
            var values: [String: Any] = ["css": renderer.styleURL, "js": "/static/admin.js?v=1", "hitChart": chart, "latencyChart": ""]
            values["numbers"] = CacheStats.numbers.map { number -> [String: Any] in
                let kind = number.kind == .gauge ? "gauge" : number.kind == .counter ? "counter" : "words"
                return ["name": number.name, "value": DashboardPage.words(number.read(stats), unit: number.unit), "kind": kind]
            }
            values["sources"] = (stats.source?.shown ?? []).map { source -> [String: Any] in
                [
                    "url": source.url, "title": source.title ?? "", "state": source.failingSince.map { "\(source.state) since \($0)" } ?? source.state,
                    "failing": source.severity < 2, "items": String(source.items), "last_fetch_at": source.lastFetchAt ?? "never",
                    "last_result": source.lastResult ?? "", "next_poll_at": source.nextPollAt ?? "", "failures": String(source.consecutiveFailures),
                    "bytes": DashboardPage.words(.number(Double(source.bytesTotal)), unit: .bytes),
                ]
            }
            for number in CacheStats.numbers {
                let value = number.read(stats)
                #expect(value != nil, "\(number.name) is held, so both engines read it")
                values[number.name] = number.unit == .flag ? (value == .number(1)) as Any : DashboardPage.words(value, unit: number.unit) as Any
            }
            let expected = library.render(values, withTemplate: "admin") ?? ""
            let dashboard = dashboardPage.render(stats, hitChart: chart, latencyChart: "")
            #expect(Self.difference(dashboard, expected) == nil, "the dashboard, flags \(up)")
            #expect(String(decoding: dashboard, as: UTF8.self).contains(up ? "answering" : "Redis cannot be reached"))
        }
    }

    /// Stats with every number the operator's views show held: `words` in
    /// each text, `up` in each flag.
    static func everyNumber(words: String, up: Bool) -> CacheStats {
        var stats = CacheStats()
        (stats.store.backend, stats.store.location, stats.store.answering, stats.store.problem, stats.store.revision) = ("sqlite", words, up, words, 3)
        stats.store.copy = StoreStatus.Copy(
            folder: words, writes: 4, pagesFromCopy: 5, pagesFromStore: 6, catchUps: 7, rowsCopied: 8, rebuilds: 1, problem: words)
        var source = RefreshStatus(source: words, refreshSeconds: 60)
        (source.lastImportAt, source.lastError, source.polledElsewhere, source.listLastProblem) = ("2026-11-28T12:00:00Z", words, up, words)
        source.shown = [
            SourceStatus(
                id: 1, url: words, title: words, site: nil, listedBy: words, state: up ? "ok" : "failing", items: 3, lastFetchAt: words,
                lastResult: words, lastStatus: 500, nextPollAt: words, consecutiveFailures: up ? 0 : 2, failingSince: up ? nil : words,
                hostHeldUntil: nil, bytesLast: 10, bytesTotal: 1 << 20)
        ]
        stats.source = source
        var rows = CacheStats.Rows()
        (rows.ahead, rows.reason, rows.tag, rows.caughtUp, rows.lastError, rows.prepared) = (up, words, "a1b2", up, words, 12)
        rows.readsPerPage = 1.2
        stats.rows = rows
        var shared = CacheStats.Shared()
        (shared.location, shared.up, shared.problem, shared.keys, shared.bytes, shared.maxBytes) = (words, up, words, 9, 1 << 20, 1 << 30)
        (shared.latency.p50Ms, shared.latency.p99Ms, shared.claimsWon) = (0.4, 3, 2)
        stats.shared = shared
        stats.node = words
        (stats.origin.latency.p50Ms, stats.origin.latency.p99Ms) = (12, 1500)
        (stats.thumbnailLatency.p50Ms, stats.thumbnailLatency.p99Ms) = (30, 90)
        (stats.hitRatio, stats.hits, stats.misses) = (0.75, 3, 1)
        (stats.prewarm.pageOneWarmSeconds, stats.prewarm.pageWarmSeconds, stats.prewarm.leads) = (2.5, 0.3, ["2": 1, "10": 3])
        (stats.memoryUse.rssBytes, stats.memoryUse.anonymousBytes, stats.memoryUse.fileBytes, stats.memoryUse.threads) = (90 << 20, 60 << 20, 30 << 20, 12)
        stats.memoryUse.allocator = CacheStats.Allocator()
        stats.uptimeSeconds = 3600
        return stats
    }
}
