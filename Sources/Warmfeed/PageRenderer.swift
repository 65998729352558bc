import HTMLTemplates
import HTTPServer
import Mustache
import WarmfeedCore

/// Renders pages, documents and error pages from the Mustache files in `Templates/`.
///
/// The page templates (`layout`, `page` and the partials it includes) are on
/// every cold page's path: they are compiled at load into `HTMLTemplate`s that
/// write bytes straight into one buffer, and an error in one stops the start
/// with its file and line. The admin and error pages, rendered rarely, go
/// through swift-mustache.
///
/// Item text is untrusted: `{{ }}` escapes it, and links are kept only when
/// they are plain `http(s)` URLs.
struct PageRenderer: Sendable {
    /// The templates every page needs; loading fails early when one is missing.
    static let requiredTemplates = ["layout", "page", "row", "sentinel", "end", "error", "admin"]

    private let library: MustacheLibrary
    private let pageTemplate: HTMLTemplate
    private let layoutTemplate: HTMLTemplate
    /// Where the thin client's files are served (versioned, so cached for ever).
    let scriptURL: String
    let styleURL: String
    let threshold: Double

    /// The renderer for `configuration`, linking the thin client's versioned URLs from `statics`.
    static func load(_ configuration: WarmfeedConfiguration, statics: StaticFiles) async throws -> PageRenderer {
        try await PageRenderer(
            templatesFolder: configuration.templatesFolder,
            scriptURL: statics.versionedURL(of: "feed.js"),
            styleURL: statics.versionedURL(of: "feed.css"),
            threshold: configuration.threshold
        )
    }

    struct MissingTemplate: Error, CustomStringConvertible {
        var name: String
        var folder: String
        var description: String { "template \(name).mustache is missing from \(folder)" }
    }

    init(templatesFolder: String, scriptURL: String, styleURL: String, threshold: Double) async throws {
        let folder = try TemplateFolder(path: templatesFolder)
        for name in Self.requiredTemplates where !folder.has(name) {
            throw MissingTemplate(name: name, folder: templatesFolder)
        }
        pageTemplate = try folder.compile("page", schema: PageValues.page)
        layoutTemplate = try folder.compile("layout", schema: PageValues.layout)
        library = try await MustacheLibrary(directory: templatesFolder)
        self.scriptURL = scriptURL
        self.styleURL = styleURL
        self.threshold = threshold
    }

    /// The rows of `page` with its sentinel (or the end-of-feed row), as HTML bytes.
    func fragment(of page: Page, query: PageQuery, number: Int) -> [UInt8] {
        let next = page.older.map { older in
            let next = PageQuery(request: .after(older), number: number + 1)
            return (document: next.documentURL, fragment: next.fragmentURL)
        }
        let values = PageFragmentValues(
            page: page, number: number, url: query.documentURL,
            split: Sentinel.rowsBefore(rowCount: page.items.count, threshold: threshold), next: next
        )
        var html = HTMLBuffer(capacity: 1024 + page.items.count * 768)
        pageTemplate.render(values, into: &html)
        return html.bytes
    }

    /// A whole document: the layout around one page's fragment, as HTML bytes.
    func document(fragment: [UInt8], page: Page, number: Int) -> [UInt8] {
        let values = LayoutValues(
            number: number, css: styleURL, js: scriptURL,
            newer: page.newer.map { PageQuery(request: .before($0), number: max(1, number - 1)).documentURL },
            next: page.older.map { PageQuery(request: .after($0), number: number + 1).documentURL },
            fragment: fragment
        )
        var html = HTMLBuffer(capacity: fragment.count + 1024)
        layoutTemplate.render(values, into: &html)
        return html.bytes
    }

    /// The admin dashboard.
    func admin(_ context: [String: Any]) -> String {
        library.render(context, withTemplate: "admin") ?? ""
    }

    /// An HTML error page with a short message.
    func errorDocument(status: Int, message: String) -> String {
        library.render(
            ["status": status, "reason": Self.reason(status), "message": message, "css": styleURL] as [String: Any],
            withTemplate: "error"
        ) ?? "\(status) \(message)"
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
