import HTTPTypes

/// Sends each request to the handler of its path.
///
/// Routes are exact paths or path prefixes. A path that has a route but not for
/// the request's method gets 405 with `Allow`; a path with no route gets 404.
/// `HEAD` is served by the `GET` handler (the event loop leaves the body out).
public struct Router: Sendable {
    /// A handler turns a request into a reply.
    public typealias Handler = @Sendable (Request) -> Reply

    private struct Route: Sendable {
        var methods: [HTTPRequest.Method: Handler] = [:]
    }

    private var exact: [String: Route] = [:]
    private var prefixes: [(prefix: String, route: Route)] = []

    /// How the router's own refusals (no route, a method not allowed) are
    /// answered, with the headers they must carry (`Allow`): plain text unless
    /// the application says otherwise (a browser that navigates to a wrong
    /// address may be shown a page of the site's own).
    public var problems: @Sendable (HTTPProblem, Request, [HTTPField]) -> Response = { problem, _, headers in
        .problem(problem, headers: headers)
    }

    /// An empty router: every path is 404.
    public init() {}

    /// Routes `GET` (and `HEAD`) of exactly `path` to `handler`.
    public mutating func get(_ path: String, _ handler: @escaping Handler) {
        exact[path, default: Route()].methods[.get] = handler
    }

    /// Routes `POST` of exactly `path` to `handler`; its body is `Request.body`.
    public mutating func post(_ path: String, _ handler: @escaping Handler) {
        exact[path, default: Route()].methods[.post] = handler
    }

    /// Routes `GET` (and `HEAD`) of every path that starts with `prefix` to `handler`.
    public mutating func get(prefix: String, _ handler: @escaping Handler) {
        if let index = prefixes.firstIndex(where: { $0.prefix == prefix }) {
            prefixes[index].route.methods[.get] = handler
        } else {
            prefixes.append((prefix, Route(methods: [.get: handler])))
            // Longest prefix first, so a more specific route wins.
            prefixes.sort { $0.prefix.count > $1.prefix.count }
        }
    }

    /// The reply for `request`.
    public func reply(to request: Request) -> Reply {
        guard let route = route(for: request.path) else {
            return .now(problems(HTTPProblem(status: 404, message: "not found: \(request.path.prefix(200))"), request, []))
        }
        let method = request.method == .head ? .get : request.method
        guard let handler = route.methods[method] else {
            var allowed = route.methods.keys.map(\.rawValue).sorted()
            if allowed.contains("GET") { allowed.append("HEAD") }
            let allow = allowed.joined(separator: ", ")
            let problem = HTTPProblem(status: 405, message: "method \(request.method.rawValue.prefix(20)) not allowed here; allowed: \(allow)")
            return .now(problems(problem, request, [HTTPField("Allow", allow)]))
        }
        return handler(request)
    }

    private func route(for path: String) -> Route? {
        if let route = exact[path] { return route }
        return prefixes.first { path.hasPrefix($0.prefix) }?.route
    }
}
