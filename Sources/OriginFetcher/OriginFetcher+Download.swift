extension OriginFetcher {
    /// Downloads the body at `url` into the file at `path`, unless the copy
    /// already held is still current.
    ///
    /// The body is streamed to `path + ".part"` as it arrives, so a large feed
    /// never sits in memory, and renamed to `path` only once whole: `path`
    /// holds either the copy it held before or the complete new one. On any
    /// failure (an error status, a limit, a reset, cancellation) the part file
    /// is removed before this throws. Two downloads to the same `path` at once
    /// must be avoided by the caller: they share the part file.
    ///
    /// Redirects, schemes, timeouts, the per-host cap and cancellation work as
    /// for ``fetch(_:limits:)``; `limits.maxBodyBytes` caps the file.
    ///
    /// - Parameters:
    ///   - conditional: the validators of the copy held, sent as
    ///     `If-None-Match` and `If-Modified-Since`. When the origin answers 304
    ///     the result says `notModified` and the file is neither created nor
    ///     touched. A `file://` read ignores them and always copies the file.
    ///   - headers: extra request headers, such as `Accept` for feeds or a
    ///     `User-Agent` of the caller's own (it replaces the fetcher's).
    ///   - passing: final statuses to answer with rather than throw, such as
    ///     429 and 503 for a poller that must hear their `Retry-After`: the
    ///     result has the status and its ``Download/freshness``, no byte of
    ///     its body is written and the file is neither created nor touched.
    ///     2xx and 304 are answered as always, whatever it holds.
    /// - Throws: `FetchError.httpStatus` for a final status outside 2xx that is
    ///   not 304 nor in `passing`, `.invalidHeader` for a header name or value that could inject
    ///   headers (CR, LF or NUL; a name that is not a token) before anything is
    ///   sent, `.writeFailed` when the file cannot be written, and the errors
    ///   of ``fetch(_:limits:)``.
    public func download(
        _ url: String, to path: String, conditional: ConditionalRequest = .init(),
        headers: [(String, String)] = [], limits: FetchLimits, passing: Set<Int> = []
    ) async throws(FetchError) -> Download {
        guard !path.isEmpty, !path.utf8.contains(0) else { throw .writeFailed("no file path: \"\(path)\"") }
        let reply = try await perform(
            url, limits: limits, destination: .file(path: path), headers: headers, conditional: conditional, passing: passing)
        let notModified = reply.status == 304
        // A passed status (a 429, say) says nothing of the copy held: its validators stand.
        let passed = !notModified && !(200..<300).contains(reply.status)
        return Download(
            status: reply.status,
            etag: passed ? conditional.etag : reply.etag ?? (notModified ? conditional.etag : nil),
            lastModified: passed ? conditional.lastModified : reply.lastModified ?? (notModified ? conditional.lastModified : nil),
            contentType: reply.contentType,
            freshness: reply.freshness,
            bytes: notModified || passed ? 0 : reply.bodyBytes,
            elapsed: reply.elapsed,
            finalURL: reply.finalURL)
    }
}
