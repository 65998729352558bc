import HTTPTypes

/// What the server answers to one request.
public struct Response: Sendable {
    /// The status; an integer literal makes one (`.plain(404, …)`).
    public var status: HTTPResponse.Status
    /// Header lines, in the order they are sent.
    public var headers: HTTPFields
    /// The body, shared rather than copied when the same response is sent often.
    public var body: ResponseBytes

    /// Makes a response.
    public init(status: HTTPResponse.Status = .ok, headers: some Sequence<HTTPField> = [HTTPField](), body: ResponseBytes = .empty) {
        self.status = status
        self.headers = HTTPFields(headers)
        self.body = body
    }

    /// Makes a response with header lines built already (a set kept and
    /// extended for each answer, rather than built line by line).
    public init(status: HTTPResponse.Status = .ok, fields: HTTPFields, body: ResponseBytes = .empty) {
        self.status = status
        self.headers = fields
        self.body = body
    }

    /// The header lines `html` starts its answers with, for a caller that keeps them built.
    public static func htmlFields(_ headers: some Sequence<HTTPField>) -> HTTPFields {
        var fields = HTTPFields([HTTPField(name: .contentType, value: "text/html; charset=utf-8")])
        fields.append(contentsOf: headers)
        return fields
    }

    /// A short plain-text answer, the form every error of the core takes.
    public static func plain(_ status: HTTPResponse.Status, _ message: String, headers: some Sequence<HTTPField> = [HTTPField]()) -> Response {
        var fields = HTTPFields([HTTPField(name: .contentType, value: "text/plain; charset=utf-8"), HTTPField(name: .cacheControl, value: "no-store")])
        fields.append(contentsOf: headers)
        return Response(status: status, headers: fields, body: ResponseBytes(message + "\n"))
    }

    /// An HTML answer.
    public static func html(_ status: HTTPResponse.Status = .ok, _ body: ResponseBytes, headers: some Sequence<HTTPField> = [HTTPField]()) -> Response {
        Response(status: status, fields: htmlFields(headers), body: body)
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
    /// Work that ends with a response built once and kept (a thumbnail, a page
    /// from a cache) answers `.prepared`, and it is sent as it is.
    case waiting(@Sendable () async -> Answer)
    /// As `waiting`, within `deadline`: when the work takes longer, or the
    /// server sheds the wait to make room for others (see `SuspendedWaits`),
    /// `otherwise` is answered at once and the work goes on with no one to
    /// answer (a thumbnail made for the next reader). A `waiting` shed that
    /// way is answered 503.
    case waitingAtMost(Duration, otherwise: Answer, @Sendable () async -> Answer)

    /// An answer ready now, built for the request or kept.
    @inlinable
    public static func answered(_ answer: Answer) -> Reply {
        switch answer {
        case .response(let response): .now(response)
        case .prepared(let prepared): .prepared(prepared)
        }
    }

    /// Work that may wait and ends with a response built for this request.
    public static func later(_ work: @escaping @Sendable () async -> Response) -> Reply {
        .waiting { .response(await work()) }
    }

    /// What it answers with, however it is given (waiting for the work of `waiting`).
    public var answer: Answer {
        get async {
            switch self {
            case .now(let response): .response(response)
            case .prepared(let prepared): .prepared(prepared)
            case .waiting(let work), .waitingAtMost(_, _, let work): await work()
            }
        }
    }

    /// The response, however it is given (waiting for the work of `waiting`).
    public var response: Response {
        get async {
            switch self {
            case .now(let response): response
            case .prepared(let prepared): prepared.response
            case .waiting(let work), .waitingAtMost(_, _, let work): await work().response
            }
        }
    }
}

/// What work that waited ends with: a response built for the request, or one
/// built once and kept, sent without building its head again.
public enum Answer: Sendable {
    case response(Response)
    case prepared(PreparedResponse)

    /// The response it answers with.
    public var response: Response {
        switch self {
        case .response(let response): response
        case .prepared(let prepared): prepared.response
        }
    }
}
