/// Reads any feed: tells JSON from XML by its first bytes and hands the
/// source to that format's streaming parser.
public enum FeedReader {
    /// Parses `input`, calling `onEntry` for each entry in source order and
    /// `onProblem` for each stretch that could not be read. Throws
    /// `ImportError` when the source is not a feed at all (empty, HTML, neither
    /// JSON nor XML), and rethrows what `onEntry` throws.
    public static func read(
        _ input: FeedInput, onEntry: (RawEntry) throws -> Void, onProblem: (ImportProblem) -> Void
    ) throws -> FeedMetadata {
        switch try sniff(input) {
        case .json: return try JSONFeedParser.parse(input, onEntry: onEntry, onProblem: onProblem)
        case .xml: return try XMLFeedParser.parse(input, onEntry: onEntry, onProblem: onProblem)
        }
    }

    enum Syntax { case json, xml }

    /// JSON or XML, from the first byte that is not a byte-order mark or white space.
    static func sniff(_ input: FeedInput) throws -> Syntax {
        let head = try input.prefix(4096)
        if head.starts(with: [0xFE, 0xFF]) || head.starts(with: [0xFF, 0xFE]) { return .xml }  // UTF-16: only XML declares it
        var bytes = head[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        guard let first = bytes.first(where: { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) }) else {
            throw ImportError("empty source")
        }
        switch first {
        case UInt8(ascii: "{"), UInt8(ascii: "["): return .json
        case UInt8(ascii: "<"): return .xml
        default: throw ImportError("not a feed: neither XML nor JSON")
        }
    }
}
