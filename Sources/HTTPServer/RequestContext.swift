/// The server's state for one request, from the request line to the last byte.
///
/// Created in libmicrohttpd's URI-log callback (which sees the raw target),
/// carried as the request's `req_cls`, released in the completed callback.
/// libmicrohttpd calls back for one connection on one thread at a time; the only
/// cross-thread hand-over is `response`, written by the async handler before it
/// calls `MHD_resume_connection`, whose internal lock orders the write before the
/// server thread's read on the next callback.
final class RequestContext: @unchecked Sendable {
    enum Phase {
        /// The request line arrived; headers may still be coming.
        case started
        /// Headers are in; any body is being read.
        case reading
        /// Suspended while an async handler runs.
        case waiting
        /// The async handler left its response; send it on the next callback.
        case answered
    }

    let rawTarget: String
    /// The address just past the target's last byte in libmicrohttpd's buffer
    /// (as `strlen` saw it); the version must start one byte further on.
    var rawTargetEnd = 0
    var phase: Phase = .started
    var bodyBytes = 0
    /// Whether the body is kept for the handler (a `POST`'s, a small form).
    var keepsBody = false
    /// The body kept, when `keepsBody`.
    var body: [UInt8] = []
    var response: Answer?
    /// The head's fields, read with its lines on the first call, for the handler.
    var fields = RequestFields()

    /// The fields, left empty here (the request holds them from now on).
    func takeFields() -> RequestFields {
        defer { fields = RequestFields() }
        return fields
    }

    init(rawTarget: String) {
        self.rawTarget = rawTarget
    }
}
