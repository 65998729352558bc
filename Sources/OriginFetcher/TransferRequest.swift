/// Where a transfer puts the body it receives.
enum BodyDestination: Sendable {
    /// In memory, whole, for `fetch`.
    case memory
    /// Streamed into the file at `path` (through `path.part`), for `download`.
    case file(path: String)
}

/// What a fetch or a download hands to the transfer thread.
struct FetchRequest: Sendable {
    /// The URL, already checked by `OriginURL`.
    var url: String
    /// The limits it runs under.
    var limits: FetchLimits
    /// Where the body goes.
    var destination: BodyDestination = .memory
    /// Extra request header lines, already checked by `RequestHeaders`.
    var headerLines: [String] = []
    /// Final statuses outside 2xx and 304 that a download answers with, its
    /// body dropped, instead of failing with `httpStatus` (downloads only).
    var passing: Set<Int> = []
    /// When `fetch` or `download` was called, for the elapsed time.
    var startedAt: ContinuousClock.Instant
    /// Whether someone waits on it now (a reader): it starts before the host's other fetches.
    var urgent = true
    /// What bounds the bytes its body may hold in memory, with other fetches' (nil: only the body limit).
    var allowance: BodyAllowance?
    /// Resumed exactly once: by the transfer thread when the transfer ends, or
    /// by whoever takes the request out of the `FetchQueue` before it starts.
    var continuation: CheckedContinuation<Result<TransferReply, FetchError>, Never>

    /// Ends the fetch.
    func resume(_ result: Result<TransferReply, FetchError>) {
        continuation.resume(returning: result)
    }
}

/// What a transfer that ended well hands back; `fetch` and `download` each
/// make their public result from it.
struct TransferReply: Sendable {
    /// The final status: 2xx, or 304 or a status it passes for a download;
    /// 200 for a `file://` read.
    var status: Int
    /// The final response's `Content-Type`.
    var contentType: String?
    /// The final response's `ETag` (downloads only).
    var etag: String?
    /// The final response's `Last-Modified` (downloads only).
    var lastModified: String?
    /// What the final response's headers said of its freshness (downloads only).
    var freshness = ResponseFreshness()
    /// The URL after redirects.
    var finalURL: String
    /// How many redirects were followed.
    var redirects: Int
    /// The body, for `.memory`; empty for `.file`.
    var body: [UInt8]
    /// The body's size: kept in memory or written to the file.
    var bodyBytes: Int
    /// The body's bytes, counted in the fetch's allowance until it is released.
    var lease: BodyLease?
    /// From the call to the end of the transfer.
    var elapsed: Duration
}
