import HTTPServer
import ImageFormats
import WarmfeedCore

/// `GET /thumbs/<item id>/<1x|2x>`: an item's thumbnail, AVIF, WebP or JPEG by `Accept`.
///
/// A thumbnail in memory is answered at once from the server thread; anything
/// else waits off the server threads for a tier (the shared one, the disk),
/// the job in flight, or a new job, which alone reads the item from the store.
/// A failing origin or store gets the placeholder, never a 5xx.
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
        guard parts.count == 2, let id = Self.itemID(parts[0]) else {
            return .now(.plain(404, "no such thumbnail: use /thumbs/<item id>/<1x|2x>"))
        }
        let accept = request.header(.accept) ?? ""
        let (avif, webp) = (accept.contains("image/avif"), accept.contains("image/webp"))
        let format: ImageFormat = avif ? .avif : webp ? .webp : .jpeg
        guard let variant = ThumbnailVariant(name: String(parts[1]), format: format) else {
            return .now(.plain(400, "unknown thumbnail variant \"\(parts[1].prefix(20))\": use 1x or 2x"))
        }
        if avif { service.noteDemand(for: .avif) }
        let key = ThumbnailKey(itemID: id, variant: variant)
        if let prepared = service.cached(key) {
            return Self.notModified(prepared, request).map { .now($0) } ?? .prepared(prepared)
        }
        guard avif, webp else { return answer(key, request) }
        // No AVIF yet, for a browser that takes WebP too: the WebP now, never a wait on an
        // AVIF encode (several times a WebP's); once the WebP is there (so the original
        // is), the AVIF is made for whoever comes next.
        let fallback = ThumbnailKey(itemID: id, variant: ThumbnailVariant(scale: variant.scale, format: .webp))
        if let prepared = service.cached(fallback) {
            service.answeredWithoutAVIF(key)
            return Self.notModified(prepared, request).map { .now($0) } ?? .prepared(prepared)
        }
        return answer(fallback, request, then: key)
    }

    /// `key` once it is made (or failed), off the server threads; when it
    /// is made, `avif` (the AVIF of the same thumbnail) is made after it.
    private func answer(_ key: ThumbnailKey, _ request: Request, then avif: ThumbnailKey? = nil) -> Reply {
        // The thumbnail's response was built once, when it was made: it is sent as it is.
        .waiting {
            switch await service.thumbnail(key) {
            case .image(let prepared):
                if let avif { service.answeredWithoutAVIF(avif) }
                return Self.notModified(prepared, request).map { .response($0) } ?? .prepared(prepared)
            case .placeholder: return Self.preparedPlaceholder.map { .prepared($0) } ?? .response(Self.placeholderResponse)
            case .noSuchItem: return .response(.plain(404, "no such item: \(key.itemID)"))
            }
        }
    }

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

    /// The placeholder's response built once for every box (nil only if memory ran out then).
    static let preparedPlaceholder = PreparedResponse(placeholderResponse)

    static func itemID(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.count <= 18, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int64(text).flatMap { $0 > 0 ? $0 : nil }
    }
}
