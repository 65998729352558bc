import CMicroHTTPD

/// A response built once and sent many times.
///
/// libmicrohttpd response objects are reference-counted and may be queued on
/// any number of connections at once: a page or a thumbnail that is served
/// often is turned into one here, so each request costs no header building and
/// no body copy, only the queueing. The body stays retained until the last
/// connection sending it is done.
public final class PreparedResponse: @unchecked Sendable {
    // Safe to share: the MHD response is immutable once built, and libmicrohttpd
    // counts its references under its own lock.
    let handle: OpaquePointer
    /// The response it was made from.
    public let response: Response
    /// Its status line and header lines as the event loop writes them (`ResponseHead`).
    let head: [UInt8]

    /// Builds the libmicrohttpd response for `response`; nil only when out of memory.
    public init?(_ response: Response) {
        guard let handle = ServerCore.makeMHDResponse(response) else { return nil }
        self.handle = handle
        self.response = response
        var head = [UInt8]()
        ResponseHead.statusAndFields(of: response, into: &head)
        self.head = head
    }

    deinit { MHD_destroy_response(handle) }
}
