/// A body fetched from an origin, whole, with what the caller needs to judge it.
public struct FetchedBody: Sendable {
    /// The final status code after redirects: always 2xx for HTTP, since other
    /// statuses end in `FetchError.httpStatus`; 200 for a `file://` read.
    public var status: Int
    /// The final response's `Content-Type`, as the origin sent it.
    public var contentType: String?
    /// The body bytes, exactly as sent (no content decoding is asked for).
    public var bytes: [UInt8]
    /// The time from the call to `fetch` until the body was complete, waiting
    /// for a free connection included.
    public var elapsed: Duration
    /// How many redirects were followed.
    public var redirects: Int
    /// With a fetch given a ``BodyAllowance``: the body's bytes, counted in
    /// it until this is released (keep it as long as the bytes are held).
    public var lease: BodyLease?

    /// Makes a body; the fetcher makes these, tests and callers may too.
    public init(status: Int, contentType: String?, bytes: [UInt8], elapsed: Duration, redirects: Int, lease: BodyLease? = nil) {
        self.status = status
        self.contentType = contentType
        self.bytes = bytes
        self.elapsed = elapsed
        self.redirects = redirects
        self.lease = lease
    }
}
