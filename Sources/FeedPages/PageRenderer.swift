import HTMLTemplates
import HTTPServer
import Reckoning
import WarmfeedCore

/// Renders pages, documents and error pages from the Mustache files in `Templates/`.
///
/// Every template is compiled at load into an `HTMLTemplate` against its
/// schema (`PageValues`), and an error in one stops the start with its file and
/// line. The page templates (`layout`, `page` and the partials it includes) are
/// on every cold page's path and write their fields in place; the error page,
/// rendered rarely, is given `TemplateData` built by name.
///
/// Item text is untrusted: `{{ }}` escapes it, and links are kept only when
/// they are plain `http(s)` URLs.
package struct PageRenderer: Sendable {
    /// The templates every page needs; loading fails early when one is missing.
    static let requiredTemplates = ["layout", "page", "row", "sentinel", "end", "error"]

    private let errorTemplate: HTMLTemplate
    private let pageTemplate: HTMLTemplate
    private let layoutTemplate: HTMLTemplate
    /// `row.mustache` on its own, when the page template repeats exactly it
    /// for each row: then rows are rendered ahead (`prepare(_:)`); nil when not.
    private let rowTemplate: HTMLTemplate?
    /// Names the templates rows are rendered ahead with: stored before each
    /// prepared row, so a row of other templates is told apart and rendered
    /// again (a template change takes effect on old rows too). Nil when rows
    /// are not rendered ahead.
    let rowTag: UInt32?
    /// Why rows are rendered on each request, when they are.
    let notAhead: String?
    /// Where the thin client's files are served (versioned, so cached for ever).
    let scriptURL: String
    package let styleURL: String
    let threshold: Double

    struct MissingTemplate: Error, CustomStringConvertible {
        var name: String
        var folder: String
        var description: String { "template \(name).mustache is missing from \(folder)" }
    }

    /// The store's epoch: thumbnails are named by picture (`Picture`), whose
    /// tag it is part of, and rows rendered ahead in another store's are rendered again.
    let epoch: UInt32

    package init(templatesFolder: String, scriptURL: String, styleURL: String, threshold: Double, epoch: UInt32) throws {
        self.epoch = epoch
        let folder = try TemplateFolder(path: templatesFolder)
        for name in Self.requiredTemplates where !folder.has(name) {
            throw MissingTemplate(name: name, folder: templatesFolder)
        }
        pageTemplate = try folder.compile("page", schema: PageValues.page)
        layoutTemplate = try folder.compile("layout", schema: PageValues.layout)
        (rowTemplate, rowTag, notAhead) = Self.ahead(folder, page: pageTemplate, epoch: epoch)
        errorTemplate = try folder.compile("error", schema: PageValues.error)
        self.scriptURL = scriptURL
        self.styleURL = styleURL
        self.threshold = threshold
    }

    /// The rows of `page` with its sentinel (or the end-of-feed row), as HTML
    /// bytes: each row rendered from its item, through the one way a page is
    /// rendered (`fragment(of: PreparedPage…)`).
    package func fragment(of page: Page, query: PageQuery, number: Int) -> [UInt8] {
        fragment(of: PreparedPage(page), query: query, number: number)
    }

    /// Bump when a row's bytes change for the same templates (escaping, dates,
    /// colours, the stored header): rows rendered ahead by an older build are
    /// then rendered again. v2: each row's CRC-32 after its tag, and thumbnails named by picture.
    static let rowFormat = "rows v3"

    /// The row template to render ahead with, its tag, or why there is none.
    private static func ahead(_ folder: TemplateFolder, page: HTMLTemplate, epoch: UInt32) -> (HTMLTemplate?, UInt32?, String?) {
        let row: HTMLTemplate
        do {
            row = try folder.compile("row", schema: PageValues.row)
        } catch {
            return (nil, nil, "row.mustache does not compile on its own: \(error)")
        }
        let lists: Set<Int> = [PageValues.PageField.before.rawValue, PageValues.PageField.after.rawValue]
        guard page.repeats(row, over: lists) else {
            return (nil, nil, "page.mustache does not repeat exactly {{> row}} for each row")
        }
        // A probe: a template that uses an open field other than as a value cannot be rendered ahead.
        let probe = FeedItem(id: 1, guid: "probe", title: "t", summary: "s", link: "https://example.com/", imageURL: "https://example.com/p.jpg", published: 0)
        guard PreparedHTML.prepare(row, AheadRowValues(item: probe, epoch: epoch), open: RowFields.open) != nil else {
            return (
                nil, nil,
                "row.mustache uses {{position}}, {{total}}, {{colour}}, {{number}} or {{url}} other than as a value, or {{pageStart}} other than as a section"
            )
        }
        // The epoch too: rows rendered ahead name pictures of their store, and a
        // row file left beside another store's database is rendered again.
        var named = Array(rowFormat.utf8) + [0]
        withUnsafeBytes(of: epoch.littleEndian) { named += $0 }
        named += folder.contents(of: "row") ?? []
        named.append(0)
        named += folder.contents(of: "page") ?? []
        return (row, FNV1a.hash32(named), nil)
    }

    /// `item`'s row rendered ahead, as stored (`PreparedRowTag.seal`: its tag and check first); nil when rows are not rendered ahead.
    func prepare(_ item: FeedItem) -> [UInt8]? {
        guard let rowTemplate, let rowTag, let bytes = PreparedHTML.prepare(rowTemplate, AheadRowValues(item: item, epoch: epoch), open: RowFields.open) else {
            return nil
        }
        return PreparedRowTag.seal(bytes, tag: rowTag)
    }

    /// The rows of a page with its sentinel (or the end row), as HTML bytes:
    /// rows rendered ahead from their bytes with their holes filled in, the
    /// others from their items; the same bytes either way.
    package func fragment(of page: PreparedPage, query: PageQuery, number: Int) -> [UInt8] {
        let next = Self.next(after: page.older, number: number)
        let split = Sentinel.rowsBefore(rowCount: page.rows.count, threshold: threshold)
        return PreparedRows.rendering(page, epoch: epoch, number: number, url: query.documentURL, split: split, next: next) { rows in
            var html = HTMLBuffer(capacity: 1024 + page.bytes.count + page.rows.count * 64)
            pageTemplate.render(FragmentValues(rows: rows), into: &html)
            return html.bytes
        }
    }

    /// The next page's document and fragment URLs (its sentinel's), or nil on the last page.
    private static func next(after older: Cursor?, number: Int) -> (document: String, fragment: String)? {
        older.map { PageQuery(request: .after($0), number: number + 1).urls }
    }

    /// A whole document: the layout around one page's fragment, as HTML bytes.
    func document(fragment: [UInt8], page: Page, number: Int) -> [UInt8] {
        document(fragment: fragment, older: page.older, newer: page.newer, number: number)
    }

    /// A whole document around a fragment whose page has these neighbours.
    func document(fragment: [UInt8], older: Cursor?, newer: Cursor?, number: Int) -> [UInt8] {
        fragment.withUnsafeBytes { document(fragment: $0, older: older, newer: newer, number: number) }
    }

    /// A whole document around the fragment's bytes, written into the
    /// document as they lie (a kept fragment's response body): no copy of
    /// them is made first.
    func document(fragment: UnsafeRawBufferPointer, older: Cursor?, newer: Cursor?, number: Int) -> [UInt8] {
        let values = LayoutValues(
            number: number, css: styleURL, js: scriptURL,
            newer: newer.map { PageQuery(request: .before($0), number: max(1, number - 1)).documentURL },
            next: older.map { PageQuery(request: .after($0), number: number + 1).documentURL },
            fragment: fragment
        )
        var html = HTMLBuffer(capacity: fragment.count + 1024)
        layoutTemplate.render(values, into: &html)
        return html.bytes
    }

    /// Rows whose thumbnails a document shows on its first screen, on a
    /// phone (about five rows of 823 CSS px) as on a desktop: they are not
    /// lazy, and are fetched first (`fetchpriority="high"`), as Lighthouse
    /// asks of the images that paint first; the rest load as they come near.
    static let firstScreenRows = 5

    private static let lazy = Array(" loading=\"lazy\"".utf8)
    private static let high = Array(" fetchpriority=\"high\"".utf8)

    /// Writes `fragment` with its first `firstScreenRows` thumbnails marked
    /// to be fetched first. Rows are rendered ahead, the same bytes wherever
    /// they stand, so the document marks its first rows as it wraps them
    /// (once: documents are kept rendered).
    static func writeFirstScreen(_ fragment: UnsafeRawBufferPointer, into html: inout HTMLBuffer) {
        var start = 0
        var count = 0
        while count < firstScreenRows, let found = fragment[start...].firstRange(of: lazy) {
            html.append(raw: UnsafeRawBufferPointer(rebasing: fragment[start..<found.lowerBound]))
            html.append(raw: high)
            start = found.upperBound
            count += 1
        }
        html.append(raw: UnsafeRawBufferPointer(rebasing: fragment[start...]))
    }

    /// An HTML error page with a short message.
    func errorDocument(status: Int, message: String) -> [UInt8] {
        let values = TemplateData(
            PageValues.error,
            [
                "status": .text(String(status)), "reason": .text(Self.reason(status)), "message": .text(message), "css": .text(styleURL),
            ])
        var html = HTMLBuffer(capacity: 1024)
        errorTemplate.render(values, into: &html)
        return html.bytes
    }

    /// Only absolute `http`/`https` links reach the page: no `javascript:`, no `data:`.
    static func isSafeLink(_ link: String) -> Bool {
        var link = link
        return link.withUTF8 { bytes in
            // The scheme, ASCII letters compared without case, on bytes (rows are checked in bulk).
            func scheme(_ prefix: StaticString) -> Bool {
                guard bytes.count >= prefix.utf8CodeUnitCount else { return false }
                for index in 0..<prefix.utf8CodeUnitCount where bytes[index] | 0x20 != prefix.utf8Start[index] | 0x20 { return false }
                return true
            }
            return (scheme("https://") || scheme("http://")) && !bytes.contains { $0 < 0x20 || $0 == 0x7f }
        }
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 410: "Gone"
        case 414: "URI Too Long"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Error"
        }
    }
}
