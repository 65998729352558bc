import HTTPTypes

/// One request, as the router and handlers see it.
public struct Request: Sendable {
    /// The method as sent (`GET`, `HEAD`, …).
    public var method: HTTPRequest.Method
    /// The path, percent-decoded, without the query.
    public var path: String
    /// The query's name/value pairs in order, percent-decoded; a name may repeat.
    public var query: [QueryItem]
    /// The header lines as sent.
    public var headers: HTTPFields
    /// The IPv4 address of the connection's other end, in host byte order
    /// (0 when unknown): the client, or a proxy in front of it.
    public var peer: UInt32
    /// The body of a `POST`, as sent (at most `HTTPServerConfiguration.maxFormBytes`:
    /// what a small form needs); empty for every other method, whose body is never kept.
    public var body: [UInt8]

    /// Makes a request; the server builds these, tests may too.
    public init(
        method: HTTPRequest.Method = .get, path: String, query: [QueryItem] = [], headers: HTTPFields = [:], peer: UInt32 = 0, body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.peer = peer
        self.body = body
    }

    /// Every value given for the query parameter `name`.
    public func queryValues(_ name: String) -> [String] {
        query.filter { $0.name == name }.map(\.value)
    }

    /// Every value the body gives for the form field `name`, when the body is a
    /// form (`application/x-www-form-urlencoded`); none when it is not, or does not decode.
    public func formValues(_ name: String) -> [String] {
        guard let type = header(.contentType)?.split(separator: ";").first?.trimmingSpaces().lowercased(),
            type == "application/x-www-form-urlencoded",
            let pairs = try? RequestTarget.formPairs(body)
        else { return [] }
        return pairs.filter { $0.name == name }.map(\.value)
    }

    /// The first value of header `name`, without regard to case.
    public func header(_ name: String) -> String? {
        HTTPField.Name(name).flatMap(header)
    }

    /// The first value of header `name`: the form for every request, with a
    /// name made once (`.accept`, `.secFetchMode`), not parsed from a string each time.
    public func header(_ name: HTTPField.Name) -> String? {
        headers.first { $0.name == name }?.value
    }

    /// Every value the client sent for the cookie `name`, in the order sent
    /// (a client may send a name more than once, for different paths).
    public func cookies(named name: String) -> [String] {
        guard let header = headers[.cookie] else { return [] }
        let prefix = name + "="
        return header.split(separator: ";").compactMap { part in
            let pair = part.trimmingSpaces()
            return pair.hasPrefix(prefix) ? String(pair.dropFirst(prefix.count)) : nil
        }
    }

    /// Whether `If-None-Match` names `etag` (or `*`): the client's copy is
    /// current, and a 304 answers. Compared weakly (RFC 9110, 13.1.2): a
    /// `W/` prefix on either side is left out.
    public func ifNoneMatch(matches etag: String) -> Bool {
        guard let ifNoneMatch = header(.ifNoneMatch) else { return false }
        let wanted = etag.hasPrefix("W/") ? etag.dropFirst(2) : Substring(etag)
        return ifNoneMatch.split(separator: ",").contains { candidate in
            var tag = candidate.trimmingSpaces()
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == wanted
        }
    }

    /// Whether the client said it accepts gzip (`Accept-Encoding`, honouring `q=0`).
    public var acceptsGzip: Bool {
        guard let accept = header(.acceptEncoding) else { return false }
        for part in accept.split(separator: ",") {
            let pieces = part.split(separator: ";").map { $0.trimmingSpaces() }
            guard let coding = pieces.first, coding.lowercased() == "gzip" || coding == "*" else { continue }
            let q = pieces.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return q > 0
        }
        return false
    }
}

/// One `name=value` pair of a query string.
public struct QueryItem: Sendable, Hashable {
    /// The decoded name.
    public var name: String
    /// The decoded value (empty when the pair had no `=`).
    public var value: String

    /// Makes a pair.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return String(s)
    }
}
