import HTTPServer

/// Requests sent through a router in the test's own process, with no socket
/// (as HummingbirdTesting's `.router` client does): a route test builds the
/// feature's routes on a `Router` and asks it, as the server would.
///
/// The target is parsed as the server parses it (`RequestTarget.parse`: a bad
/// one is the server's 400), and work that waits (`Reply.waiting`) is awaited.
/// What only the socket layer does is not here: libmicrohttpd's own refusals
/// (a head too large, a NUL in the line), `Content-Length`, `HEAD` bodies left
/// out, and `X-Content-Type-Options`, which the server adds to every response.
public struct InProcessClient: Sendable {
    private let handler: Router.Handler

    /// A client of `router`.
    public init(_ router: Router) {
        handler = { request in router.reply(to: request) }
    }

    /// A client of a handler, as `HTTPServer(configuration:handler:)` takes one.
    public init(handler: @escaping Router.Handler) {
        self.handler = handler
    }

    /// What a request was answered with.
    public struct Answered: Sendable {
        public var status: Int
        public var headers: HTTPFields
        public var body: [UInt8]

        /// The body as UTF-8 text.
        public var text: String { String(decoding: body, as: UTF8.self) }

        /// The first value of header `name`.
        public func header(_ name: String) -> String? {
            HTTPField.Name(name).flatMap { headers[$0] }
        }
    }

    /// Sends `method target` with `headers` (and `body`) and answers what the handler replied.
    public func send(
        _ method: HTTPRequest.Method = .get, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [], peer: UInt32 = 0x7F00_0001
    ) async -> Answered {
        let parsed: RequestTarget
        do {
            parsed = try RequestTarget.parse(target)
        } catch {
            return Self.answered(.problem(error))
        }
        var fields = HTTPFields()
        for (name, value) in headers {
            guard let name = HTTPField.Name(name) else { continue }
            fields.append(HTTPField(name: name, value: value))
        }
        let request = Request(method: method, path: parsed.path, query: parsed.query, headers: fields, peer: peer, body: body)
        return Self.answered(await handler(request).answer.response)
    }

    /// `GET target` with `headers`.
    public func get(_ target: String, headers: [(String, String)] = []) async -> Answered {
        await send(.get, target, headers: headers)
    }

    private static func answered(_ response: Response) -> Answered {
        Answered(status: response.status.code, headers: response.headers, body: response.body.bytes)
    }
}
