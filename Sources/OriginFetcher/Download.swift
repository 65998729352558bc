/// The validators of a copy already held, sent so that an origin whose source
/// has not changed answers `304 Not Modified` instead of the whole body again.
public struct ConditionalRequest: Sendable, Hashable {
    /// The `ETag` the held copy came with, sent as `If-None-Match`.
    public var etag: String?
    /// The `Last-Modified` the held copy came with, sent as `If-Modified-Since`.
    public var lastModified: String?

    /// Validators to send; with neither, the request is unconditional.
    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }
}

/// What a download brought: either a new copy, written to the file asked for,
/// or word that the copy held is still current, or a status the caller said
/// it would take (such as 429), with what its headers said.
public struct Download: Sendable {
    /// The final status after redirects: 2xx (the body is in the file; 200 for
    /// a `file://` read), 304, or one of the statuses the caller passed
    /// (nothing was written for either).
    public var status: Int
    /// Whether the origin said the held copy is still current (304); the file
    /// was then neither created nor touched.
    public var notModified: Bool { status == 304 }
    /// The final response's `ETag`. On a 304 that carried none, the one sent:
    /// a 304 updates the held copy's validators (RFC 9111 §4.3.4), so this is
    /// always the one to keep. On a passed status, the one sent, whatever
    /// that response said: the copy held is untouched, and so are its validators.
    public var etag: String?
    /// The final response's `Last-Modified`; on a 304 that carried none, the
    /// one sent; on a passed status, the one sent. For a `file://` read, the
    /// file's modification time (libcurl reports it in the same form).
    public var lastModified: String?
    /// The final response's `Content-Type`, as the origin sent it.
    public var contentType: String?
    /// What the final response's `Cache-Control`, `Age`, `Expires`, `Date`
    /// and `Retry-After` said (none of a redirect's); empty for a `file://` read.
    public var freshness: ResponseFreshness
    /// The bytes written to the file (0 on a 304 or a passed status).
    public var bytes: Int
    /// The time from the call to `download` until the file was in place,
    /// waiting for a free connection included.
    public var elapsed: Duration
    /// The URL the body came from, after redirects.
    public var finalURL: String

    /// Makes a download's result; the fetcher makes these, tests and callers may too.
    public init(
        status: Int, etag: String?, lastModified: String?, contentType: String?,
        freshness: ResponseFreshness = ResponseFreshness(), bytes: Int, elapsed: Duration, finalURL: String
    ) {
        self.status = status
        self.etag = etag
        self.lastModified = lastModified
        self.contentType = contentType
        self.freshness = freshness
        self.bytes = bytes
        self.elapsed = elapsed
        self.finalURL = finalURL
    }
}
