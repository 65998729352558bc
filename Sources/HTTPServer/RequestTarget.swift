/// The request line's target (`/path?query`), checked and decoded.
///
/// The server does its own decoding from the raw target rather than take
/// libmicrohttpd's: that way an encoded NUL, an invalid escape or a `..` segment
/// is refused with a clear 400 instead of being silently truncated or resolved.
public struct RequestTarget: Sendable, Equatable {
    /// The decoded path.
    public var path: String
    /// The decoded query pairs, in order.
    public var query: [QueryItem]

    /// Why a target was refused; `message` is what the client is told.
    public typealias Problem = HTTPProblem

    /// Parses a raw target. Targets longer than `maxLength` bytes, or with more
    /// than `maxQueryItems` query pairs, are refused with 414.
    ///
    /// Every request passes here, so the target is read in place as bytes, and
    /// a piece with no escape becomes its `String` without an array between.
    public static func parse(_ raw: String, maxLength: Int = 8192, maxQueryItems: Int = 100) throws(Problem) -> RequestTarget {
        var raw = raw
        return try raw.withUTF8 { parse(bytes: $0, maxLength: maxLength, maxQueryItems: maxQueryItems) }.get()
    }

    private static func parse(bytes utf8: UnsafeBufferPointer<UInt8>, maxLength: Int, maxQueryItems: Int) -> Result<RequestTarget, Problem> {
        guard utf8.count <= maxLength else {
            return .failure(Problem(status: 414, message: "URL too long: at most \(maxLength) bytes"))
        }
        guard utf8.first == UInt8(ascii: "/") else {
            return .failure(Problem(status: 400, message: "bad request target: it must start with /"))
        }
        if utf8.contains(where: isSpaceOrControl) {
            return .failure(Problem(status: 400, message: spaceOrControlMessage))
        }
        let queryStart = utf8.firstIndex(of: UInt8(ascii: "?"))
        let rawPath = utf8[..<(queryStart ?? utf8.endIndex)]
        let path: String
        if rawPath.contains(UInt8(ascii: "%")) {
            guard let pathBytes = percentDecode(rawPath, plusIsSpace: false) else {
                return .failure(Problem(status: 400, message: "bad path: invalid percent-encoding"))
            }
            if let problem = pathProblem(pathBytes) { return .failure(problem) }
            switch text(pathBytes, what: "path") {
            case .success(let text): path = text
            case .failure(let problem): return .failure(problem)
            }
        } else {
            if let problem = pathProblem(rawPath) { return .failure(problem) }
            path = String(decoding: UnsafeBufferPointer(rebasing: rawPath), as: UTF8.self)
        }
        var query: [QueryItem] = []
        if let queryStart {
            switch pairs(utf8[(queryStart + 1)...], maxItems: maxQueryItems, tooMany: 414) {
            case .success(let pairs): query = pairs
            case .failure(let problem): return .failure(problem)
            }
        }
        return .success(RequestTarget(path: path, query: query))
    }

    /// The `name=value` pairs of a form's body (`application/x-www-form-urlencoded`,
    /// the same encoding as a query), decoded; at most `maxItems` of them (else 413).
    public static func formPairs(_ body: [UInt8], maxItems: Int = 100) throws(Problem) -> [QueryItem] {
        try body.withUnsafeBufferPointer { pairs($0[...], maxItems: maxItems, tooMany: 413) }.get()
    }

    /// The pairs of a query or a form, decoded; `tooMany` is the status past `maxItems`.
    /// The pieces are found twice by scanning, once to count them and once to
    /// decode them, rather than kept in an array: every request with a query passes here.
    private static func pairs(_ raw: Slice<UnsafeBufferPointer<UInt8>>, maxItems: Int, tooMany: Int) -> Result<[QueryItem], Problem> {
        var count = 0
        forEachPiece(of: raw) { _ in count += 1 }
        guard count <= maxItems else {
            return .failure(Problem(status: tooMany, message: "too many query parameters: at most \(maxItems)"))
        }
        var query: [QueryItem] = []
        query.reserveCapacity(count)
        var problem: Problem?
        forEachPiece(of: raw) { pair in
            guard problem == nil else { return }
            let equals = pair.firstIndex(of: UInt8(ascii: "="))
            let rawName = pair[..<(equals ?? pair.endIndex)]
            let rawValue = equals.map { pair[($0 + 1)...] } ?? pair[pair.endIndex...]
            switch (queryText(rawName), queryText(rawValue)) {
            case (.success(let name), .success(let value)): query.append(QueryItem(name, value))
            case (.failure(let refused), _), (_, .failure(let refused)): problem = refused
            }
        }
        if let problem { return .failure(problem) }
        return .success(query)
    }

    /// Calls `body` with each non-empty piece of `raw` between `&`s, in order.
    private static func forEachPiece(
        of raw: Slice<UnsafeBufferPointer<UInt8>>, _ body: (Slice<UnsafeBufferPointer<UInt8>>) -> Void
    ) {
        var start = raw.startIndex
        while start < raw.endIndex {
            let end = raw[start...].firstIndex(of: UInt8(ascii: "&")) ?? raw.endIndex
            if end > start { body(raw[start..<end]) }
            start = end + 1
        }
    }

    /// A `.` or `..` segment or a backslash in a decoded path.
    private static func pathProblem<Path: RandomAccessCollection<UInt8>>(_ path: Path) -> Problem? where Path.Index == Int {
        if hasDotSegment(path) {
            return Problem(status: 400, message: "bad path: dot segments are not allowed")
        }
        if path.contains(UInt8(ascii: "\\")) {
            return Problem(status: 400, message: "bad path: backslashes are not allowed")
        }
        return nil
    }

    /// A query name or value, decoded (`+` is a space there).
    private static func queryText(_ raw: Slice<UnsafeBufferPointer<UInt8>>) -> Result<String, Problem> {
        guard raw.contains(UInt8(ascii: "%")) || raw.contains(UInt8(ascii: "+")) else {
            return .success(String(decoding: UnsafeBufferPointer(rebasing: raw), as: UTF8.self))
        }
        guard let bytes = percentDecode(raw, plusIsSpace: true) else {
            return .failure(Problem(status: 400, message: "bad query: invalid percent-encoding"))
        }
        return text(bytes, what: "query")
    }

    /// RFC 9112 §3.2: a target has no spaces or control characters (libmicrohttpd
    /// passed on a bare CR, a tab or a space inside one as part of it).
    private static func isSpaceOrControl(_ byte: UInt8) -> Bool { byte <= 0x20 || byte == 0x7F }

    static let spaceOrControlMessage = "bad request target: spaces and control characters are not allowed"

    /// Whether a segment of the decoded path is `.` or `..` (a byte scan: this runs on every request).
    static func hasDotSegment<Path: RandomAccessCollection<UInt8>>(_ path: Path) -> Bool where Path.Index == Int {
        var segmentStart = path.startIndex
        for index in path.startIndex...path.endIndex {
            guard index == path.endIndex || path[index] == UInt8(ascii: "/") else { continue }
            let length = index - segmentStart
            if length == 1 || length == 2,
                path[segmentStart] == UInt8(ascii: "."), length == 1 || path[segmentStart + 1] == UInt8(ascii: ".")
            {
                return true
            }
            segmentStart = index + 1
        }
        return false
    }

    private static func text(_ bytes: [UInt8], what: String) -> Result<String, Problem> {
        if bytes.contains(0) {
            return .failure(Problem(status: 400, message: "bad \(what): NUL bytes are not allowed"))
        }
        guard let string = String(validating: bytes, as: UTF8.self) else {
            return .failure(Problem(status: 400, message: "bad \(what): not UTF-8"))
        }
        return .success(string)
    }

    /// Decodes `%XX` escapes (and `+` as space in queries); nil for a broken escape.
    static func percentDecode<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, plusIsSpace: Bool) -> [UInt8]? where Bytes.Index == Int {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex,
                    let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
                else { return nil }
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
