import Foundation
import Logging
import Synchronization
import Testing

@testable import FeedPages
@testable import Warmfeed
@testable import WarmfeedCore

/// Rows rendered ahead and kept in the store (issue 23): a page served from
/// them is byte for byte the page its items make, on every backend, while
/// rows are prepared, half prepared or stale; a template change is seen on
/// old rows after a restart.
@Suite(.serialized) struct PreparedRowsTests {
    static let templates = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Templates").path

    static func renderer(_ folder: String = templates) async throws -> PageRenderer {
        try PageRenderer(templatesFolder: folder, scriptURL: "/static/feed.js?v=abc", styleURL: "/static/feed.css?v=d&e", threshold: 0.7, epoch: 7)
    }

    /// Demo rows and hostile imports: markup, entities, quotes, non-ASCII,
    /// unsafe links, empty titles and summaries, text-only rows, a long title.
    static func corpus() -> [FeedItem] {
        var items = DemoFeed.items(count: 60)
        let hostile: [(String, String, String?, String?)] = [
            (#"<script>alert("x")</script> & 'quotes'"#, "<b>bold</b> &amp; entity", "https://example.com/?a=1&b=<2>", "https://img.example/1.jpg"),
            ("Ünïcödé — 東京 🚀 e\u{301}", "", "javascript:alert(1)", nil),
            ("", "summary only", nil, "https://img.example/2.jpg"),
            ("title", "tab\tnew\nline", "HTTP://EXAMPLE.COM/x\"y", nil),
            ("link with a control", "x", "https://e.com/\u{7}", nil),
            (String(repeating: "a<&>'\"", count: 1 << 12), String(repeating: "ß", count: 1000), "https://e.com", "https://img.example/3.png"),
        ]
        for (offset, (title, summary, link, image)) in hostile.enumerated() {
            items.append(
                FeedItem(
                    guid: "hostile-\(offset)", title: title, summary: summary, link: link, imageURL: image,
                    published: [-62_135_596_800_000, 0, 1_800_000_000_123, 253_402_300_799_000, 1_000, 86_399_999][offset]))
        }
        return items
    }

    /// Every page of the feed at `size` by number, the next page by cursor and
    /// the newer page by cursor: the fragment and document from the items and
    /// from the prepared rows. Returns the differences and how many rows came prepared.
    static func compare(_ store: any FeedStore, _ renderer: PageRenderer, size: Int) async throws -> (
        differences: [String], preparedRows: Int, rows: Int, pages: Int
    ) {
        let tag = try #require(renderer.rowTag)
        var differences: [String] = []
        var prepared = 0
        var rows = 0
        var requests: [(PageRequest, Int)] = []
        let count = try await store.count()
        for number in 1...max(1, (count + size - 1) / size) { requests.append((.number(number), number)) }
        if let second = try await store.page(.number(2), size: size) {
            if let older = second.older { requests.append((.after(older), 3)) }
            if let newer = second.newer { requests.append((.before(newer), 1)) }
        }
        for (request, number) in requests {
            let page = try #require(try await store.page(request, size: size))
            let ahead = try #require(try await store.preparedPage(request, size: size, tag: tag))
            let query = PageQuery(request: request, number: number)
            let live = renderer.fragment(of: page, query: query, number: number)
            let served = renderer.fragment(of: ahead, query: query, number: number)
            if live != served { differences.append("fragment of \(request): \(difference(served, live))") }
            let liveDocument = renderer.document(fragment: live, page: page, number: number)
            let servedDocument = renderer.document(fragment: served, older: ahead.older, newer: ahead.newer, number: number)
            if liveDocument != servedDocument { differences.append("document of \(request)") }
            if ahead.awaitingPreviews != page.items.contains(where: { $0.imageURL != nil && $0.preview == nil }) {
                differences.append("awaiting previews of \(request)")
            }
            // A prepared row comes without its item, the page's first too (its
            // page number and URL are an open section of its prepared bytes).
            prepared += ahead.rows.filter { !$0.prepared.isEmpty }.count
            if ahead.rows.contains(where: { !$0.prepared.isEmpty && $0.itemIndex != nil }) { differences.append("items read for prepared rows of \(request)") }
            rows += ahead.rows.count
        }
        return (differences, prepared, rows, requests.count)
    }

    static func difference(_ bytes: [UInt8], _ expected: [UInt8]) -> String {
        let at = (0..<min(bytes.count, expected.count)).first { bytes[$0] != expected[$0] } ?? min(bytes.count, expected.count)
        let window = { (b: [UInt8]) in String(decoding: b[max(0, at - 60)..<min(b.count, at + 60)], as: UTF8.self) }
        return "at byte \(at) of \(bytes.count) (expected \(expected.count)): \(window(bytes)) | expected: \(window(expected))"
    }

    static func preparation(_ store: any FeedStore, _ renderer: PageRenderer) -> RowPreparation {
        RowPreparation(store: store, renderer: renderer, pageSize: 30, logger: Logger(label: "test"))
    }

    @Test(arguments: Backend.available)
    func pagesFromPreparedRowsAreByteForByteThePagesOfTheirItems(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let store = made.store
            try store.upsert(Self.corpus())
            let renderer = try await Self.renderer()
            // Some previews before the rows are prepared, some after: the colours are a hole.
            let ids = try #require(try await store.page(.number(1), size: 100)).items.compactMap(\.id)
            try await store.setPreviews(Dictionary(uniqueKeysWithValues: ids.filter { $0 % 3 == 0 }.map { ($0, $0 * 0x0610_1806_1018 & 0xFFFF_FFFF_FFFF) }))

            // Nothing prepared: every row from its item.
            var result = try await Self.compare(store, renderer, size: 30)
            #expect(result.differences == [])
            #expect(result.preparedRows == 0)

            // Half prepared, by hand.
            _ = try await store.prepareRows(tag: renderer.rowTag!, sweep: false, after: 0, limit: 1000) { item in
                item.id! % 2 == 0 ? renderer.prepare(item) : nil
            }
            result = try await Self.compare(store, renderer, size: 7)
            #expect(result.differences == [])
            #expect(result.preparedRows > 0 && result.preparedRows < result.rows)

            // All prepared; then previews kept after, and an item changed by an import.
            let preparation = Self.preparation(store, renderer)
            try await preparation.catchUp()
            #expect(preparation.status.caughtUp)
            for size in [30, 7, 1] {
                result = try await Self.compare(store, renderer, size: size)
                #expect(result.differences == [], "pages of \(size)")
                // Every row comes prepared, each page's first too.
                #expect(result.preparedRows == result.rows, "pages of \(size): \(result.preparedRows) of \(result.rows) rows prepared")
            }
            try await store.setPreviews(Dictionary(uniqueKeysWithValues: ids.filter { $0 % 3 == 1 }.map { ($0, $0 &* 0x0102_0304_0506 & 0xFFFF_FFFF_FFFF) }))
            var changed = Self.corpus()[10]
            changed.title = "Changed <title> & more"
            try store.upsert([changed])
            result = try await Self.compare(store, renderer, size: 30)
            #expect(result.differences == [])
            let page = try #require(try await store.page(.number(1), size: 100))
            #expect(
                String(
                    decoding: renderer.fragment(
                        of: try #require(try await store.preparedPage(.number(1), size: 100, tag: renderer.rowTag!)),
                        query: PageQuery(request: .number(1), number: 1), number: 1), as: UTF8.self
                )
                .contains("Changed &lt;title&gt; &amp; more"))
            #expect(page.items.contains { $0.title == changed.title })
            // The changed row is prepared again on the next pass.
            #expect(try await Self.waiting(store, renderer).map(\.title) == [changed.title])
            try await preparation.catchUp()
            #expect(try await Self.waiting(store, renderer).isEmpty)
            #expect(try await Self.compare(store, renderer, size: 30).differences == [])
        }
    }

    /// The items whose rows wait to be rendered, read without rendering any.
    static func waiting(_ store: any FeedStore, _ renderer: PageRenderer) async throws -> [FeedItem] {
        let seen = Mutex<[FeedItem]>([])
        _ = try await store.prepareRows(tag: renderer.rowTag!, sweep: false, after: 0, limit: 1000) { item in
            seen.withLock { $0.append(item) }
            return nil
        }
        return seen.withLock { $0 }
    }

    @Test(arguments: Backend.available)
    func twoNodesPreparingAtOnceRenderEachRowOnce(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            try made.store.upsert(DemoFeed.items(count: 300))
            let renderer = try await Self.renderer()
            let other = try await made.another()
            let renders = Mutex<[Int64: Int]>([:])
            // Slow renders: each batch holds its items a while, so the two passes overlap.
            let render: @Sendable (FeedItem) -> [UInt8]? = { item in
                renders.withLock { $0[item.id!, default: 0] += 1 }
                usleep(2_000)
                return renderer.prepare(item)
            }
            func pass(_ store: any FeedStore) async throws -> Int {
                var after: Int64 = 0
                var kept = 0
                while let batch = try await store.prepareRows(tag: renderer.rowTag!, sweep: false, after: after, limit: 50, render: render) {
                    kept += batch.kept
                    after = batch.last
                }
                return kept
            }
            async let one = pass(made.store)
            async let two = pass(other)
            let (a, b) = try await (one, two)
            #expect(a + b == 300)
            #expect(renders.withLock { $0.count } == 300)
            #expect(renders.withLock { $0.values.allSatisfy { $0 == 1 } }, "a row was rendered twice")
            #expect(try await Self.waiting(made.store, renderer).isEmpty)
            if made.backend == .postgres { await other.close() }
        }
    }

    @Test(arguments: Backend.available)
    func aTemplateChangeIsSeenOnOldRowsAfterARestart(_ backend: Backend) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("templates-\(UUID().uuidString)")
        try FileManager.default.copyItem(atPath: Self.templates, toPath: folder.path)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await TestStore.with(backend) { made in
            try made.store.upsert(DemoFeed.items(count: 200))
            let before = try await Self.renderer(folder.path)
            // Each start is an opening of its own, closed when it stops (on PostgreSQL,
            // only one opening at a time leads, and prepares).
            let firstStore = try await made.another()
            let first = Self.preparation(firstStore, before)
            try await first.catchUp()
            #expect(first.status.prepared == 200)
            #expect(try await firstStore.note(RowPreparation.note) == String(before.rowTag!))
            await firstStore.close()

            // The operator edits a row template and restarts (another opening of the store),
            // with sections over fields a prepared row leaves open: kept open, they show
            // in its bytes as they do in the row rendered from its item (`compare` below).
            let row = folder.appendingPathComponent("row.mustache")
            let sections = "{{#url}} data-first{{/url}}{{^pageStart}} data-later{{/pageStart}}{{#position}} data-at=\"{{position}}\"{{/position}}"
            try (try String(contentsOf: row, encoding: .utf8)).replacingOccurrences(of: "<article ", with: "<article data-edited=\"yes\"\(sections) ")
                .write(to: row, atomically: true, encoding: .utf8)
            let store = try await made.another()
            let after = try await Self.renderer(folder.path)
            #expect(after.rowTag != before.rowTag)
            let query = PageQuery(request: .number(2), number: 2)
            // At once, before any row is rendered again: old rows are rendered from their items.
            let stale = try #require(try await store.preparedPage(.number(2), size: 30, tag: after.rowTag!))
            #expect(stale.rows.allSatisfy { $0.prepared.isEmpty })
            #expect(Self.edited(after.fragment(of: stale, query: query, number: 2)) == 30)
            // Then the new start walks the feed once, and rows come prepared with the new template.
            let second = Self.preparation(store, after)
            try await second.catchUp()
            #expect(second.status.sweeps == 1)
            #expect(second.status.prepared == 200)
            let fresh = try #require(try await store.preparedPage(.number(2), size: 30, tag: after.rowTag!))
            #expect(fresh.rows.allSatisfy { !$0.prepared.isEmpty })
            let freshHTML = String(decoding: after.fragment(of: fresh, query: query, number: 2), as: UTF8.self)
            #expect(Self.edited(Array(freshHTML.utf8)) == 30)
            #expect(freshHTML.components(separatedBy: " data-first").count - 1 == 1)
            #expect(freshHTML.components(separatedBy: " data-later").count - 1 == 29)
            #expect(freshHTML.contains(" data-at=\"31\"") && freshHTML.contains(" data-at=\"60\""))
            #expect(try await Self.compare(store, after, size: 30).differences == [])
            await store.close()
            // A later start with the same templates walks nothing.
            let thirdStore = try await made.another()
            let third = Self.preparation(thirdStore, after)
            try await third.catchUp()
            #expect(third.status.caughtUp)
            #expect(third.status.sweeps == 0)
            #expect(third.status.prepared == 0)
            await thirdStore.close()
        }
    }

    static func edited(_ html: [UInt8]) -> Int {
        String(decoding: html, as: UTF8.self).components(separatedBy: "data-edited=\"yes\"").count - 1
    }

    @Test func aRiverPreparedAsItsSourcesWroteLiesScatteredUntilASweepLaysItOutInPageOrder() async throws {
        try await TestStore.with(.sqlite) { made in
            let store = made.store
            let renderer = try await Self.renderer()
            let tag = try #require(renderer.rowTag)
            let render: @Sendable (FeedItem) -> [UInt8]? = { renderer.prepare($0) }
            // Twenty sources, each written and prepared on its own (as polls land), their dates
            // interleaved: source s's item n at n·20 + s minutes. A page holds rows of every source.
            for source in 0..<20 {
                let items = (0..<30).map { n in
                    FeedItem(guid: "s\(source)-\(n)", title: "Item \(n) of \(source)", summary: "A summary.", published: Int64(n * 20 + source + 1) * 60_000)
                }
                try await upsert(store, items)
                _ = try await store.prepareRows(tag: tag, sweep: false, after: 0, limit: 1000, render: render)
            }
            let scattered = try #require(await store.rowReadsPerPage(size: 30))
            #expect(scattered > 10, "each row of a page lies apart from the next: \(scattered) reads a page")
            // The sweep, in batches; a write between two of them moves ranks under its cursor.
            var after: Int64 = 0
            var batches = 0
            while let batch = try await store.prepareRows(tag: tag, sweep: true, after: after, limit: 100, render: render) {
                after = batch.last
                batches += 1
                if batches == 2 { try await upsert(store, [FeedItem(guid: "late", title: "Late", summary: "", published: 30_000)]) }
            }
            #expect(batches >= 6)
            // What the sweep's cursor passed by is prepared by the next pass.
            _ = try await store.prepareRows(tag: tag, sweep: false, after: 0, limit: 1000, render: render)
            let laid = try #require(await store.rowReadsPerPage(size: 30))
            #expect(laid < 1.5, "a page is one read once laid out in page order: \(laid) reads a page")
            let compared = try await Self.compare(store, renderer, size: 30)
            #expect(compared.differences.isEmpty, "\(compared.differences.prefix(3))")
            #expect(compared.preparedRows == compared.rows, "every row prepared: \(compared.preparedRows) of \(compared.rows)")
            // New polls scatter the newest pages only: most pages still take one read, and no sweep is due.
            for source in 0..<5 {
                let items = (0..<12).map { n in
                    FeedItem(guid: "new\(source)-\(n)", title: "New \(n) of \(source)", summary: "A summary.", published: Int64(700 + n * 5 + source) * 60_000)
                }
                try await upsert(store, items)
                _ = try await store.prepareRows(tag: tag, sweep: false, after: 0, limit: 1000, render: render)
            }
            let grown = try #require(await store.rowReadsPerPage(size: 30))
            #expect(grown < 1.5, "the median page is still one read: \(grown)")
        }
    }

    @Test func aPageTemplateThatDoesNotRepeatTheRowRendersRowsOnEachRequest() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("templates-\(UUID().uuidString)")
        try FileManager.default.copyItem(atPath: Self.templates, toPath: folder.path)
        defer { try? FileManager.default.removeItem(at: folder) }
        let page = folder.appendingPathComponent("page.mustache")
        try (try String(contentsOf: page, encoding: .utf8)).replacingOccurrences(of: "{{#after}}{{> row}}", with: "{{#after}}<hr>{{> row}}")
            .write(to: page, atomically: true, encoding: .utf8)
        let renderer = try await Self.renderer(folder.path)
        #expect(renderer.rowTag == nil)
        #expect(renderer.notAhead?.contains("page.mustache") == true)
        let item = DemoFeed.items(count: 1)[0]
        #expect(renderer.prepare(item) == nil)
    }
}
