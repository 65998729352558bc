import HTTPServer
import Mustache
import WarmfeedCore

/// Renders pages, documents and error pages from the Mustache files in `Templates/`.
///
/// Item text is untrusted: Mustache's `{{ }}` escapes it, and links are kept
/// only when they are plain `http(s)` URLs.
struct PageRenderer: Sendable {
    /// The templates every page needs; loading fails early when one is missing.
    static let requiredTemplates = ["layout", "page", "row", "sentinel", "end", "error", "admin"]

    private let library: MustacheLibrary
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
        library = try await MustacheLibrary(directory: templatesFolder)
        for name in Self.requiredTemplates where library.getTemplate(named: name) == nil {
            throw MissingTemplate(name: name, folder: templatesFolder)
        }
        self.scriptURL = scriptURL
        self.styleURL = styleURL
        self.threshold = threshold
    }

    /// The rows of `page` with its sentinel (or the end-of-feed row).
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

    /// A whole document: the layout around one page's fragment.
    func document(fragment: String, page: Page, number: Int) -> String {
        var context: [String: Any] = [
            "title": number == 1 ? "Warmfeed" : "Warmfeed · page \(number)",
            "css": styleURL,
            "js": scriptURL,
            "fragment": fragment,
        ]
        if number > 1 { context["pageNumber"] = String(number) }
        if let newer = page.newer {
            context["newer"] = PageQuery(request: .before(newer), number: max(1, number - 1)).documentURL
        }
        if let older = page.older {
            context["next"] = PageQuery(request: .after(older), number: number + 1).documentURL
        }
        return library.render(context, withTemplate: "layout") ?? ""
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

    private func row(_ item: FeedItem, position: Int, total: Int, pageStart: (number: Int, url: String)?) -> [String: Any] {
        let id = item.id ?? 0
        var row: [String: Any] = [
            "id": id,
            "position": position,
            "total": total,
            "title": item.title,
            "colour": Int((UInt64(bitPattern: id) &* 0x9e37_79b9_7f4a_7c15) >> 61),
            "iso": Timestamp.iso(item.published),
            "date": Timestamp.display(item.published),
        ]
        if !item.summary.isEmpty { row["summary"] = item.summary }
        if item.imageURL != nil { row["thumb"] = true }
        if let link = item.link, Self.isSafeLink(link) { row["link"] = link }
        if let pageStart {
            row["pageStart"] = true
            row["number"] = pageStart.number
            row["url"] = pageStart.url
        }
        return row
    }

    /// Only absolute `http`/`https` links reach the page: no `javascript:`, no `data:`.
    static func isSafeLink(_ link: String) -> Bool {
        let lower = link.prefix(8).lowercased()
        return (lower.hasPrefix("https://") || lower.hasPrefix("http://"))
            && !link.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f })
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
