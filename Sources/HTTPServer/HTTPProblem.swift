import HTTPTypes

/// A request refused: the status to answer with and a short plain message
/// for the client. One type for every refusal, the HTTP core's (a head, a
/// target) and the routes' (a page query), answered one way (`problem(_:)`).
public struct HTTPProblem: Error, Equatable, Sendable {
    /// The status to answer with (a 4xx, or 501 for what nobody here speaks).
    public var status: Int
    /// A short plain message.
    public var message: String

    /// A refusal with `status` and `message`.
    public init(status: Int, message: String) {
        self.status = status
        self.message = message
    }
}

extension Response {
    /// The plain-text answer to `problem`, never cached.
    public static func problem(_ problem: HTTPProblem, headers: some Sequence<HTTPField> = [HTTPField]()) -> Response {
        .plain(HTTPResponse.Status(code: problem.status), problem.message, headers: headers)
    }
}
