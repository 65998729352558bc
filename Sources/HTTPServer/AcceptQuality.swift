/// How much a request's `Accept` header wants one media type (RFC 9110
/// §12.5.1): the quality of the most specific range that matches it
/// (`type/subtype` over `type/*` over `*/*`), in thousandths. Or how much its
/// `Accept-Encoding` wants one content coding (§12.5.3): the coding named
/// over `*`.
public struct AcceptQuality: Sendable, Equatable {
    /// The quality, 0 (not acceptable) to 1000.
    public var thousandths: Int
    /// Whether a range named the type itself (not only `type/*` or `*/*`).
    public var named: Bool

    /// Makes one.
    public init(thousandths: Int, named: Bool) {
        self.thousandths = thousandths
        self.named = named
    }

    /// Whether the type is acceptable at all (a quality above 0).
    public var accepts: Bool { thousandths > 0 }

    /// The quality `accept` gives `mediaType` (lower-case `type/subtype`);
    /// nil when no range of it matches. Reads the bytes once, allocating
    /// nothing: it runs on every thumbnail request.
    public static func of(_ mediaType: String, in accept: String) -> AcceptQuality? {
        var type = mediaType
        return type.withUTF8 { wanted in
            var accept = accept
            return accept.withUTF8 { Self.scan(UnsafeRawBufferPointer(wanted), in: UnsafeRawBufferPointer($0)) }
        }
    }

    /// The quality `acceptEncoding` gives `coding` (lower-case, such as
    /// `gzip`); nil when neither it nor `*` is named. Reads the bytes once,
    /// allocating nothing: it runs on every page request. A coding named
    /// beats `*`, whatever their order (`*;q=0, gzip` takes gzip).
    public static func of(coding: String, in acceptEncoding: String) -> AcceptQuality? {
        var coding = coding
        return coding.withUTF8 { wanted in
            var accept = acceptEncoding
            return accept.withUTF8 { Self.scan(UnsafeRawBufferPointer(wanted), in: UnsafeRawBufferPointer($0), media: false) }
        }
    }

    /// Specificity of a range that matches: 3 exact, 2 `type/*`, 1 `*/*`
    /// (for a coding, `media` false: 3 exact, 1 `*`).
    private static func scan(_ wanted: UnsafeRawBufferPointer, in header: UnsafeRawBufferPointer, media: Bool = true) -> AcceptQuality? {
        let slash: Int?
        if media {
            guard let index = wanted.firstIndex(of: UInt8(ascii: "/")) else { return nil }
            slash = index
        } else {
            slash = nil
        }
        var best: (specificity: Int, quality: Int)?
        var index = 0
        let end = header.count
        while index < end {
            // One range: up to the next comma.
            var stop = index
            while stop < end, header[stop] != UInt8(ascii: ",") { stop += 1 }
            if let (specificity, quality) = match(header, from: index, to: stop, wanted: wanted, slash: slash),
                specificity > (best?.specificity ?? 0)
            {
                best = (specificity, quality)
            }
            index = stop + 1
        }
        return best.map { AcceptQuality(thousandths: $0.quality, named: $0.specificity == 3) }
    }

    /// How the range in `header[from..<to]` matches `wanted`, and its quality; nil when it does not.
    private static func match(
        _ header: UnsafeRawBufferPointer, from: Int, to: Int, wanted: UnsafeRawBufferPointer, slash: Int?
    ) -> (Int, Int)? {
        var start = from
        while start < to, header[start] == 0x20 || header[start] == 0x09 { start += 1 }
        var rangeEnd = start
        while rangeEnd < to, header[rangeEnd] != UInt8(ascii: ";"), header[rangeEnd] != 0x20, header[rangeEnd] != 0x09 { rangeEnd += 1 }
        let length = rangeEnd - start
        let specificity: Int
        if slash != nil, length == 3, header[start] == UInt8(ascii: "*"), header[start + 1] == UInt8(ascii: "/"), header[start + 2] == UInt8(ascii: "*") {
            specificity = 1
        } else if slash == nil, length == 1, header[start] == UInt8(ascii: "*") {
            specificity = 1
        } else if let slash, length == slash + 2, equalFolded(header, start, wanted, 0, count: slash + 1),
            header[start + slash + 1] == UInt8(ascii: "*")
        {
            specificity = 2
        } else if length == wanted.count, equalFolded(header, start, wanted, 0, count: length) {
            specificity = 3
        } else {
            return nil
        }
        return (specificity, quality(header, from: rangeEnd, to: to))
    }

    /// The `q` parameter among the parameters in `header[from..<to]`; 1000 when absent, 0 when malformed.
    private static func quality(_ header: UnsafeRawBufferPointer, from: Int, to: Int) -> Int {
        var index = from
        while index < to {
            guard header[index] == UInt8(ascii: ";") else {
                index += 1
                continue
            }
            index += 1
            while index < to, header[index] == 0x20 || header[index] == 0x09 { index += 1 }
            guard index + 1 < to, header[index] | 0x20 == UInt8(ascii: "q"), header[index + 1] == UInt8(ascii: "=") else { continue }
            index += 2
            // qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
            guard index < to, header[index] == UInt8(ascii: "0") || header[index] == UInt8(ascii: "1") else { return 0 }
            var value = Int(header[index] - UInt8(ascii: "0")) * 1000
            index += 1
            if index < to, header[index] == UInt8(ascii: ".") {
                index += 1
                var scale = 100
                while index < to, scale > 0, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(header[index]) {
                    value += Int(header[index] - UInt8(ascii: "0")) * scale
                    scale /= 10
                    index += 1
                }
            }
            return min(value, 1000)
        }
        return 1000
    }

    private static func equalFolded(_ a: UnsafeRawBufferPointer, _ aStart: Int, _ b: UnsafeRawBufferPointer, _ bStart: Int, count: Int) -> Bool {
        for offset in 0..<count {
            let x = a[aStart + offset]
            let y = b[bStart + offset]
            // ASCII letters compare without case; media types and codings are case-insensitive.
            let foldedX = (0x41...0x5A).contains(x) ? x | 0x20 : x
            if foldedX != y { return false }
        }
        return true
    }
}
