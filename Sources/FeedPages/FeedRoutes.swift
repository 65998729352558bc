import Foundation
import HTTPServer
import Logging
import WarmfeedCore

/// The feed's routes: documents at `/`, fragments at `/fragment`.
///
/// A page already rendered is answered at once from the server thread. A page
/// not yet rendered is read and rendered there too when the store reads at
/// once (SQLite), and gzipped there when the client takes gzip (libdeflate at
/// level 1: a bounded multiple of the render, docs/benchmarks-history.md); otherwise
/// (PostgreSQL) off the server threads (`.waiting`).
/// Every page served tells the pre-warmer where its reader is.
package struct FeedRoutes: Sendable {
    let pages: PageService
    /// Pre-warm, told where each reader is; nil when nothing is warmed ahead.
    let prewarmer: (any ReaderTracking)?
    let logger: Logger

    package init(pages: PageService, prewarmer: (any ReaderTracking)?, logger: Logger) {
        self.pages = pages
        self.prewarmer = prewarmer
        self.logger = logger
    }

    package func add(to router: inout Router) {
        router.get("/") { request in reply(to: request, kind: .document) }
        router.get("/fragment") { request in reply(to: request, kind: .fragment) }
    }

    private func reply(to request: Request, kind: PageCache.Kind) -> Reply {
        let query: PageQuery
        do {
            query = try PageQuery.parse(request.query, epoch: pages.epoch)
        } catch {
            return .now(failure(error, kind: kind))
        }
        // Just after start, page 1 is answered once it is warm (a few hundred
        // milliseconds), so the first screen anyone sees is whole.
        if let gate = prewarmer?.startGate, query.number == 1, !gate.isOpen {
            return .later {
                await gate.passWithinLimit()
                return await reply(to: request, query: query, kind: kind).response
            }
        }
        return reply(to: request, query: query, kind: kind)
    }

    private func reply(to request: Request, query: PageQuery, kind: PageCache.Kind) -> Reply {
        let revision = pages.revision
        let key = PageCache.Key(revision: revision, kind: kind, query: query)
        let gzip = request.acceptsGzip
        let reader = ReaderCookie(request: request, issueIfMissing: kind == .document)
        if let rendering = pages.kept(key) {
            track(reader, rendering, query: key.query, revision: revision)
            // The first client that accepts gzip compresses the page, here on the server
            // thread, as a cold page is: a page of rows at level 1 is ~50 µs of CPU.
            let served = gzip && !rendering.compressed ? pages.compressed(rendering, for: key) : rendering
            return .answered(answer(served, gzip: gzip, reader: reader, request: request))
        }
        // Read and rendered here, on the server thread, when the store can
        // (SQLite; a PostgreSQL node's current copy): no hand-off and back.
        let atOnce: PageCache.Rendering??
        do {
            atOnce = pages.rendersAtOnce ? .some(try pages.renderAtOnce(key)) : try pages.renderWithoutWaiting(key)
        } catch {
            return .now(storeFailure(error, kind: kind))
        }
        if let rendered = atOnce {
            guard var rendering = rendered else { return .now(noSuchPage(kind)) }
            if gzip { rendering = pages.compressed(rendering, for: key) }
            track(reader, rendering, query: key.query, revision: revision)
            return .answered(answer(rendering, gzip: gzip, reader: reader, request: request))
        }
        return .waiting {
            do {
                guard var rendering = try await pages.render(key) else { return .response(noSuchPage(kind)) }
                if gzip { rendering = pages.compressed(rendering, for: key) }
                track(reader, rendering, query: key.query, revision: revision)
                return answer(rendering, gzip: gzip, reader: reader, request: request)
            } catch {
                return .response(storeFailure(error, kind: kind))
            }
        }
    }

    /// A rendering's answer, now or after waiting: 304 when the client's
    /// copy is current (its `If-None-Match`), else its kept response as it is,
    /// unless this reader is issued a cookie (then a copy with the cookie's header).
    private func answer(_ rendering: PageCache.Rendering, gzip: Bool, reader: ReaderCookie, request: Request) -> Answer {
        if request.ifNoneMatch(matches: rendering.etag) { return .response(notModified(rendering, reader: reader)) }
        guard reader.setCookie != nil else { return .prepared(gzip ? rendering.gzipped ?? rendering.plain : rendering.plain) }
        return .response(response(rendering, gzip: gzip, reader: reader))
    }

    /// The 304 for a client whose copy of `rendering` is current: the
    /// validator and the caching headers a 200 would carry, no body.
    private func notModified(_ rendering: PageCache.Rendering, reader: ReaderCookie) -> Response {
        var headers = PageHeaders.notModified + [HTTPField("ETag", rendering.etag)]
        if let setCookie = reader.setCookie { headers.append(HTTPField("Set-Cookie", setCookie)) }
        return Response(status: 304, headers: headers)
    }

    private func noSuchPage(_ kind: PageCache.Kind) -> Response {
        failure(HTTPProblem(status: 404, message: "no such page: the feed is shorter than that"), kind: kind)
    }

    private func storeFailure(_ error: any Error, kind: PageCache.Kind) -> Response {
        logger.error("page failed", metadata: ["error": "\(error)"])
        var response = failure(HTTPProblem(status: 503, message: "the feed store is not answering; try again shortly"), kind: kind)
        response.headers.append(HTTPField("Retry-After", "2"))
        return response
    }

    /// Tells pre-warm where a reader is: one whose browser came back with the
    /// cookie, or a browser navigating here for the first time (it says so with
    /// `Sec-Fetch-Mode: navigate`, and is about to scroll). Other requests
    /// without the cookie (crawlers, health checks, scripts) are not tracked,
    /// so they cost what a page from the cache costs.
    private func track(_ reader: ReaderCookie, _ rendering: PageCache.Rendering, query: PageQuery, revision: Int) {
        guard let prewarmer, let id = reader.tracked else { return }
        prewarmer.readerViewed(
            id, number: rendering.number, query: query, older: rendering.older, newer: rendering.newer, revision: revision, scale: reader.scale)
    }

    private func response(_ rendering: PageCache.Rendering, gzip: Bool, reader: ReaderCookie) -> Response {
        var response = (gzip ? rendering.gzipped ?? rendering.plain : rendering.plain).response
        if let setCookie = reader.setCookie { response.headers.append(HTTPField("Set-Cookie", setCookie)) }
        return response
    }

    /// A refusal of the router's own (no such route, a method not allowed),
    /// answered as the client asked: a browser that navigates (it accepts
    /// HTML) gets the feed's error page, anything else plain text.
    package func answer(_ problem: HTTPProblem, to request: Request, headers: [HTTPField]) -> Response {
        guard request.header(.accept)?.contains("text/html") == true else { return .problem(problem, headers: headers) }
        var response = failure(problem, kind: .document)
        response.headers.append(contentsOf: headers)
        return response
    }

    /// `problem` answered as the request asked: a fragment as plain text, a
    /// document as the feed's own error page.
    private func failure(_ problem: HTTPProblem, kind: PageCache.Kind) -> Response {
        switch kind {
        case .fragment:
            return .problem(problem)
        case .document:
            let html = pages.renderer.errorDocument(status: problem.status, message: problem.message)
            return .html(
                HTTPResponse.Status(code: problem.status), ResponseBytes(html),
                headers: PageHeaders.security + [HTTPField("Cache-Control", "no-store")])
        }
    }
}

/// The reader's id, from the `wf` cookie (issued with the first document), so
/// the pre-warmer can follow each reader's position.
package struct ReaderCookie: Sendable {
    /// The id's 16 hex digits as a number, read from the cookie's bytes: as a
    /// `String` it was a heap block on every reader's page view.
    var id: UInt64?
    var setCookie: String?

    /// Whether the request is a browser's navigation (`Sec-Fetch-Mode: navigate`).
    var navigating = false

    /// The thumbnail scale the reader's screen loads, when the browser said its
    /// pixel ratio (`Sec-CH-DPR`); nil when it did not.
    var scale: Int?

    /// The id to track: one that came back, or one issued now to a navigating browser.
    var tracked: UInt64? { setCookie == nil || navigating ? id : nil }

    init(request: Request, issueIfMissing: Bool) {
        navigating = request.header(.secFetchMode) == "navigate"
        // A value comes without the white space around it (`RequestFields`): trimming it
        // again here was 1% of a reader's page's CPU.
        if let hint = request.header(.secCHDPR).flatMap({ Double($0) }), hint > 0, hint < 16 {
            scale = ThumbnailVariant.scale(forPixelRatio: hint)
        }
        var found: UInt64?
        request.forEachCookie(named: "wf") { value in
            found = Self.number(value)
            return found == nil
        }
        if let found {
            id = found
            return
        }
        guard issueIfMissing else { return }
        let fresh = UInt64.random(in: 0...UInt64.max)
        id = fresh
        setCookie = "wf=\(Self.text(fresh)); Path=/; Max-Age=2592000; HttpOnly; SameSite=Lax"
    }

    /// An id's 16 lowercase hex digits as a number; nil for anything else.
    package static func number(_ digits: UnsafeBufferPointer<UInt8>) -> UInt64? {
        guard digits.count == 16 else { return nil }
        var number: UInt64 = 0
        for byte in digits {
            switch byte {
            case 0x30...0x39: number = number << 4 | UInt64(byte - 0x30)
            case 0x61...0x66: number = number << 4 | UInt64(byte - 0x61 + 10)
            default: return nil
            }
        }
        return number
    }

    /// The id `number` as the cookie carries it: 16 lowercase hex digits.
    package static func text(_ number: UInt64) -> String {
        let hex = String(number, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
