import HTTPServer
import Logging
import WarmfeedCore

/// The feed's routes: documents at `/`, fragments at `/fragment`.
///
/// A page already rendered is answered at once from the server thread; a page
/// not yet rendered is read and rendered off the server threads (`.later`).
struct FeedRoutes: Sendable {
    let store: FeedStore
    let renderer: PageRenderer
    let cache: PageCache
    let pageSize: Int
    let logger: Logger

    static let securityHeaders = [
        HTTPField(
            "Content-Security-Policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
        ),
        HTTPField("Referrer-Policy", "same-origin"),
    ]

    func add(to router: inout Router) {
        router.get("/") { request in reply(to: request, kind: .document) }
        router.get("/fragment") { request in reply(to: request, kind: .fragment) }
    }

    private func reply(to request: Request, kind: PageCache.Kind) -> Reply {
        let query: PageQuery
        do {
            query = try PageQuery.parse(request.query, epoch: store.epoch)
        } catch {
            return .now(failure(error.status, error.message, kind: kind))
        }
        let key = PageCache.Key(revision: store.revision, kind: kind, query: query)
        let gzip = request.acceptsGzip
        if let rendering = cache.rendering(for: key) {
            return .now(response(rendering, gzip: gzip))
        }
        return .later {
            do {
                guard let rendering = try render(key) else {
                    return failure(404, "no such page: the feed is shorter than that", kind: kind)
                }
                return response(rendering, gzip: gzip)
            } catch {
                logger.error("page failed", metadata: ["error": "\(error)"])
                return failure(503, "the feed store is not answering; try again shortly", kind: kind)
            }
        }
    }

    /// Reads and renders the page for `key`, keeping the fragment and the document.
    private func render(_ key: PageCache.Key) throws -> PageCache.Rendering? {
        guard let page = try store.page(key.query.request, size: pageSize) else { return nil }
        let number = key.query.number ?? max(1, (page.firstPosition + pageSize - 1) / pageSize)
        var fragmentKey = key
        fragmentKey.kind = .fragment
        let fragment: PageCache.Rendering
        if let kept = cache.rendering(for: fragmentKey) {
            fragment = kept
        } else {
            fragment = PageCache.Rendering(html: renderer.fragment(of: page, query: key.query, number: number))
            cache.keep(fragment, for: fragmentKey)
        }
        guard key.kind == .document else { return fragment }
        let html = String(decoding: fragment.html.bytes, as: UTF8.self)
        let document = PageCache.Rendering(html: renderer.document(fragment: html, page: page, number: number))
        cache.keep(document, for: key)
        return document
    }

    private func response(_ rendering: PageCache.Rendering, gzip: Bool) -> Response {
        var headers = Self.securityHeaders
        headers.append(HTTPField("Cache-Control", "no-cache"))
        headers.append(HTTPField("Vary", "Accept-Encoding"))
        if gzip, let gzipped = rendering.gzipped {
            headers.append(HTTPField("Content-Encoding", "gzip"))
            return .html(200, gzipped, headers: headers)
        }
        return .html(200, rendering.html, headers: headers)
    }

    private func failure(_ status: Int, _ message: String, kind: PageCache.Kind) -> Response {
        switch kind {
        case .fragment:
            return .plain(status, message)
        case .document:
            let html = renderer.errorDocument(status: status, message: message)
            return .html(status, ResponseBytes(html), headers: Self.securityHeaders + [HTTPField("Cache-Control", "no-store")])
        }
    }
}
