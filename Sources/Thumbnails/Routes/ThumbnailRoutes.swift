import HTTPServer
import ImageFormats
import WarmfeedCore

/// `GET /thumbs/<id>-<tag>/<1x|2x>`: a picture's thumbnail, AVIF, WebP or JPEG by `Accept`.
///
/// Pages name each thumbnail by its picture (`Picture.name`: the item's id and
/// the tag of its image now), so what memory keeps under that name is always
/// that picture, and a thumbnail in memory is answered at once from the server
/// thread with no store read. Anything else waits off the server threads for a
/// tier (the shared one, the disk), the job in flight, or a new job, which
/// alone reads the item from the store. A picture the item no longer has is
/// sent on to the one it has now (307). A bare item id (`/thumbs/<id>/1x`) is
/// answered with the item's picture now, read from the store first. A failing
/// origin or store gets the placeholder, never a 5xx.
///
/// A request starts no encode costlier than it must: a reader's job makes WebP
/// or JPEG, never AVIF, which is made only on pre-warm's line (a browser that
/// takes it gets the WebP until then, or, taking nothing else, the placeholder);
/// `Accept`'s qualities are honoured. A wait has a deadline
/// (`ThumbnailService.answerWithin`): past it the reader gets a see-through
/// box (the row's preview colours show) and the job goes on for the next
/// reader, as imgproxy's timeout does; and waits are shed past the server's
/// caps the same way (`SuspendedWaits`). A cluster's node that asks
/// (`X-Warmfeed-Node`) gets 503 then instead, which it takes as busy.
package struct ThumbnailRoutes: Sendable {
    let service: ThumbnailService

    package init(service: ThumbnailService) {
        self.service = service
    }

    static let prefix = "/thumbs/"

    /// A neutral box that says the picture could not be had; `no-store` so the
    /// browser asks again once the origin is back.
    static let placeholder = ResponseBytes(
        """
        <svg xmlns="http://www.w3.org/2000/svg" width="160" height="120" viewBox="0 0 160 120">\
        <rect width="160" height="120" fill="#d6d8db"/><path d="M58 78l16-20 12 14 8-9 14 15z" fill="#a9adb3"/>\
        <circle cx="96" cy="48" r="7" fill="#a9adb3"/></svg>
        """)

    package func add(to router: inout Router) {
        router.get(prefix: Self.prefix) { request in reply(to: request) }
    }

    private func reply(to request: Request) -> Reply {
        let parts = request.path.dropFirst(Self.prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .now(Self.unknown) }
        let picture = Picture(name: parts[0])
        guard picture != nil || Self.itemID(parts[0]) != nil else { return .now(Self.unknown) }
        guard let scale = ThumbnailVariant(name: String(parts[1]), format: .webp)?.scale else {
            return .now(.plain(400, "unknown thumbnail variant \"\(parts[1].prefix(20))\": use 1x or 2x"))
        }
        let formats = Self.formats(accepted: request.header(.accept))
        if formats.contains(.avif) { service.noteDemand(for: .avif) }
        if let picture { return reply(picture, scale: scale, formats: formats, request) }
        // A bare id: its picture now, from the store.
        let id = Self.itemID(parts[0])!
        return .waitingAtMost(service.answerWithin, otherwise: late(request)) {
            // Read even if the wait is cut short meanwhile: the job it starts goes on for the next reader.
            switch await Task(operation: { await service.currentPicture(of: id) }).value {
            case .picture(let picture): return await reply(picture, scale: scale, formats: formats, request).answer
            case .noPicture: return Self.placeholderAnswer
            case .noSuchItem: return .response(.plain(404, "no such item: \(id)"))
            }
        }
    }

    /// `picture`'s thumbnail at `scale`, in the best of `formats` memory has;
    /// else made now in the cheapest one the request takes.
    private func reply(_ picture: Picture, scale: Int, formats: [ImageFormat], _ request: Request) -> Reply {
        func key(_ format: ImageFormat) -> ThumbnailKey { ThumbnailKey(picture: picture, variant: ThumbnailVariant(scale: scale, format: format)) }
        let avif = formats.first == .avif ? key(.avif) : nil
        // The formats the browser would rather have, down to the one this request would make.
        let made = formats.first { $0 != .avif }
        for format in formats.prefix(through: made.flatMap { formats.firstIndex(of: $0) } ?? formats.count - 1) {
            guard let prepared = service.cached(key(format)) else { continue }
            // Not the AVIF the browser would rather have: made for whoever comes next.
            if let avif, format != .avif { service.answeredWithoutAVIF(avif) }
            return Self.notModified(prepared, request).map { .now($0) } ?? .prepared(prepared)
        }
        // Nothing in memory: a reader's job makes WebP or JPEG, never AVIF.
        guard let made else {
            // A browser that takes AVIF alone waits for it, made at pre-warm's pace.
            guard let avif else { return .answered(Self.placeholderAnswer) }
            return .waitingAtMost(service.answerWithin, otherwise: late(request)) {
                switch await service.patientThumbnail(avif) {
                case .image(let prepared): Self.notModified(prepared, request).map { .response($0) } ?? .prepared(prepared)
                case .placeholder: Self.placeholderAnswer
                case .noSuchItem: await moved(avif)
                case nil: Self.busyAnswer
                }
            }
        }
        return answer(key(made), request, then: avif)
    }

    /// What a wait cut short answers (past its deadline, or shed): a
    /// see-through box for a browser, 503 for a cluster's node.
    private func late(_ request: Request) -> Answer {
        request.header(Self.nodeHeader) != nil ? Self.busyAnswer : Self.lateAnswer
    }

    /// The header a cluster's node sends when it asks another for a thumbnail.
    package static let nodeHeader = "X-Warmfeed-Node"

    /// `key` once it is made (or failed), off the server threads; when it
    /// is made, `avif` (the AVIF of the same thumbnail) is made after it.
    private func answer(_ key: ThumbnailKey, _ request: Request, then avif: ThumbnailKey? = nil) -> Reply {
        // The thumbnail's response was built once, when it was made: it is sent as it is.
        .waitingAtMost(service.answerWithin, otherwise: late(request)) {
            switch await service.thumbnail(key) {
            case .image(let prepared):
                if let avif { service.answeredWithoutAVIF(avif) }
                return Self.notModified(prepared, request).map { .response($0) } ?? .prepared(prepared)
            case .placeholder: return Self.placeholderAnswer
            case .noSuchItem: return await moved(key)
            }
        }
    }

    /// The answer for `key` when the store has no such picture: the item's
    /// picture now (its image changed, or the store was replaced), or 404.
    private func moved(_ key: ThumbnailKey) async -> Answer {
        switch await service.currentPicture(of: key.itemID) {
        case .picture(let current) where current != key.picture:
            return .response(
                Response(
                    status: 307,
                    headers: [
                        HTTPField("Location", Self.prefix + current.name + "/" + key.variant.name), HTTPField("Cache-Control", "no-store"),
                    ]))
        case .noPicture: return Self.placeholderAnswer
        default: return .response(.plain(404, "no such item: \(key.itemID)"))
        }
    }

    /// The formats a request takes, best first: by `Accept`'s quality, then
    /// the smallest (AVIF, WebP, JPEG). AVIF and WebP only when named; JPEG
    /// when any range takes it, and when nothing else is taken (a client
    /// without `Accept`, or one that takes no image at all, still gets a picture).
    static func formats(accepted accept: String?) -> [ImageFormat] {
        guard let accept else { return [.jpeg] }
        var taken: [(format: ImageFormat, quality: Int)] = []
        for (format, needsName) in [(ImageFormat.avif, true), (.webp, true), (.jpeg, false)] {
            guard let quality = AcceptQuality.of(format.mediaType, in: accept), quality.accepts, quality.named || !needsName else { continue }
            taken.append((format, quality.thousandths))
        }
        guard !taken.isEmpty else { return [.jpeg] }
        // A stable sort: equal qualities keep the smallest-first order.
        return taken.enumerated().sorted { ($0.element.quality, -$0.offset) > ($1.element.quality, -$1.offset) }.map(\.element.format)
    }

    static let unknown = Response.plain(404, "no such thumbnail: use the address a page gives (/thumbs/<item id>-<tag>/<1x|2x>)")

    /// The 304 for a client whose copy of the thumbnail in `prepared` is
    /// current (`If-None-Match` names its validator); nil otherwise.
    static func notModified(_ prepared: PreparedResponse, _ request: Request) -> Response? {
        guard request.header(.ifNoneMatch) != nil, let etag = prepared.response.headers[.eTag], request.ifNoneMatch(matches: etag) else {
            return nil
        }
        return Response(status: 304, headers: [HTTPField("ETag", etag)] + ThumbnailService.cachingHeaders)
    }

    /// The placeholder's response, the same for every box.
    static let placeholderResponse = Response(
        status: 200,
        headers: [
            HTTPField("Content-Type", "image/svg+xml"),
            HTTPField("Cache-Control", "no-store"),
            HTTPField("X-Warmfeed-Placeholder", "1"),
        ], body: placeholder)

    /// The placeholder's response built once for every box.
    static let preparedPlaceholder = PreparedResponse(placeholderResponse)

    /// The answer of a wait cut short: a box that shows nothing, so the row's
    /// preview colours show through; not kept, so the next look gets the picture.
    static let lateResponse = Response(
        status: 200,
        headers: [
            HTTPField("Content-Type", "image/svg+xml"),
            HTTPField("Cache-Control", "no-store"),
            HTTPField("X-Warmfeed-Placeholder", "late"),
        ], body: ResponseBytes(#"<svg xmlns="http://www.w3.org/2000/svg" width="160" height="120" viewBox="0 0 160 120"/>"#))

    static let lateAnswer = Answer.prepared(PreparedResponse(lateResponse))

    /// Not made yet, and not to be waited for now: a node takes it as busy and asks again later.
    static let busyAnswer = Answer.response(
        .plain(503, "the thumbnail is not made yet; ask again shortly", headers: [HTTPField("Retry-After", "1")]))

    /// The placeholder, as work that waited answers it.
    static var placeholderAnswer: Answer { .prepared(preparedPlaceholder) }

    static func itemID(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.count <= 18, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int64(text).flatMap { $0 > 0 ? $0 : nil }
    }
}
