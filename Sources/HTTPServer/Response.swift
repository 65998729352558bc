/// What the server answers to one request.
public struct Response: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// Header lines, in the order they are sent.
    public var headers: [HTTPField]
    /// The body, shared rather than copied when the same response is sent often.
    public var body: ResponseBytes

    /// Makes a response.
    public init(status: Int = 200, headers: [HTTPField] = [], body: ResponseBytes = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A short plain-text answer, the form every error of the core takes.
    public static func plain(_ status: Int, _ message: String, headers: [HTTPField] = []) -> Response {
        Response(
            status: status,
            headers: [HTTPField("Content-Type", "text/plain; charset=utf-8"), HTTPField("Cache-Control", "no-store")] + headers,
            body: ResponseBytes(message + "\n")
        )
    }

    /// An HTML answer.
    public static func html(_ status: Int = 200, _ body: ResponseBytes, headers: [HTTPField] = []) -> Response {
        Response(status: status, headers: [HTTPField("Content-Type", "text/html; charset=utf-8")] + headers, body: body)
    }
}

/// A handler's answer: ready now, or work to await off the server's threads.
public enum Reply: Sendable {
    /// The response is ready; it is sent from the server thread at once.
    case now(Response)
    /// A response built once and kept: sent without rebuilding anything.
    case prepared(PreparedResponse)
    /// The response needs work that may wait (the store, rendering, the origin):
    /// the connection is suspended, the work runs on Swift's pool, and the
    /// connection resumes when it is done. No server thread waits meanwhile.
    case later(@Sendable () async -> Response)
}
