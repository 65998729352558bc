import HTTPTypes

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One request, as the router and handlers see it.
public struct Request: Sendable {
    /// The method as sent (`GET`, `HEAD`, …).
    public var method: HTTPRequest.Method
    /// The path, percent-decoded, without the query.
    public var path: String
    /// The query's name/value pairs in order, percent-decoded; a name may repeat.
    public var query: [QueryItem]
    /// The header lines as sent (values without the white space around them).
    public var fields: RequestFields
    /// The header lines as `HTTPFields`, made on each call: `header(_:)` and
    /// `fields` read one line without making the others.
    public var headers: HTTPFields { fields.httpFields }
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
        self.init(method: method, path: path, query: query, fields: RequestFields(headers), peer: peer, body: body)
    }

    /// Makes a request of lines already read (the server's).
    public init(method: HTTPRequest.Method, path: String, query: [QueryItem], fields: RequestFields, peer: UInt32, body: [UInt8]) {
        self.method = method
        self.path = path
        self.query = query
        self.fields = fields
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
        fields[name]
    }

    /// Every value the client sent for the cookie `name`, in the order sent
    /// (a client may send a name more than once, for different paths).
    public func cookies(named name: String) -> [String] {
        var values: [String] = []
        forEachCookie(named: name) { value in
            values.append(String(decoding: value, as: UTF8.self))
            return true
        }
        return values
    }

    /// Hands `body` the bytes of each value the client sent for the cookie
    /// `name`, in the order sent, until it returns false.
    ///
    /// Every reader's page view asks (the `wf` cookie), so the `Cookie` lines
    /// are scanned as the bytes sent: splitting them into strings, trimming
    /// each and comparing prefixes was 7% of a warm page's CPU (perf, pinned).
    public func forEachCookie(named name: String, _ body: (UnsafeBufferPointer<UInt8>) -> Bool) {
        var name = name
        name.withUTF8 { name in
            fields.forEachValue(of: .cookie) { line in Self.scanCookies(line, named: name, body) }
        }
    }

    /// Hands `body` the value of each `name=value` pair in a `Cookie` line
    /// (pairs split at `;`, spaces and tabs around each pair left out), until
    /// it returns false; returns false then.
    private static func scanCookies(
        _ line: UnsafeBufferPointer<UInt8>, named name: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Bool
    ) -> Bool {
        var start = 0
        while start < line.count {
            var end = start
            while end < line.count, line[end] != UInt8(ascii: ";") { end += 1 }
            var first = start
            var last = end
            while first < last, line[first] == UInt8(ascii: " ") || line[first] == UInt8(ascii: "\t") { first += 1 }
            while last > first, line[last - 1] == UInt8(ascii: " ") || line[last - 1] == UInt8(ascii: "\t") { last -= 1 }
            if last - first > name.count, line[first + name.count] == UInt8(ascii: "="),
                memcmp(line.baseAddress! + first, name.baseAddress!, name.count) == 0
            {
                if !body(UnsafeBufferPointer(rebasing: line[(first + name.count + 1)..<last])) { return false }
            }
            start = end + 1
        }
        return true
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

    /// Whether the client said it accepts gzip (`Accept-Encoding`, honouring
    /// `q=0`; gzip named over `*`). Read as bytes (`AcceptQuality`): splitting
    /// it into strings was 2% of a reader's page's CPU (perf, pinned).
    public var acceptsGzip: Bool {
        guard let accept = header(.acceptEncoding) else { return false }
        return AcceptQuality.of(coding: "gzip", in: accept)?.accepts ?? false
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
    /// Without the spaces and tabs around it (HTTP's optional whitespace).
    public func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return String(s)
    }
}
