/// The sources one list names, read whole: the front door to OPML and plain
/// lists.
///
/// A list is used whole or not at all. A list that cannot be read to its
/// end (not well-formed, cut short, too large) throws and returns nothing,
/// because a half-read list would read as one whose later sources were
/// taken out. Within a list that reads, each broken entry is skipped and
/// reported with its line, and the rest are kept.
public struct SourceList: Sendable, Equatable {
    /// The largest list read: 8 MiB, some 50,000 OPML outlines.
    public static let documentLimit = 8 << 20
    /// The most sources taken from one list, unless the reader says otherwise.
    public static let sourceLimit = 10_000

    /// What the document was. For `.feed` there are no sources: the document
    /// is one source, a feed, for the feed readers.
    public var kind: SourceListKind
    /// The sources, in the list's order, each location once (the first
    /// entry naming it wins).
    public var sources: [ListedSource]
    /// The entries skipped and why, with their lines: at most 100 (then one
    /// saying there were more), and always the one saying the list named
    /// more sources than it may.
    public var problems: [ImportProblem]

    /// A list read.
    public init(kind: SourceListKind, sources: [ListedSource] = [], problems: [ImportProblem] = []) {
        self.kind = kind
        self.sources = sources
        self.problems = problems
    }

    /// Reads `input`, telling its kind from its first bytes
    /// (`SourceListKind.sniff`), then every source it names: URLs resolved
    /// against `base`, paths (only in a list read from a file) made
    /// absolute beside it. Takes at most `sourceLimit` sources; a list
    /// naming more has a problem saying so, and the rest are left out.
    ///
    /// Throws when the document is empty, none of the kinds, a list larger
    /// than `documentLimit` (a feed is told as one whatever its size), or an OPML list that is not well-formed XML or has
    /// no `opml` root. Nothing of the list is returned then.
    public static func read(_ input: FeedInput, base: SourceListBase, sourceLimit: Int = SourceList.sourceLimit) throws(ImportError) -> SourceList {
        let head = try head(of: input)
        guard let kind = SourceListKind.sniff(head) else {
            let text = head.starts(with: [0xEF, 0xBB, 0xBF]) ? head.dropFirst(3) : head[...]
            let isBlank = text.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
            throw ImportError(isBlank ? "empty source" : "neither a feed nor a list of sources (OPML, or one address a line)")
        }
        if kind == .feed { return SourceList(kind: .feed) }
        // A feed may be larger than a list may.
        if let size = input.size, size > documentLimit { throw tooLarge }
        let builder = SourceListBuilder(base: base, sourceLimit: sourceLimit)
        let read: SourceListBuilder
        switch kind {
        case .feed: return SourceList(kind: .feed)
        case .opml: read = try OPMLReader.read(input, into: builder)
        case .plainList: read = try PlainListReader.read(input, into: builder)
        }
        return SourceList(kind: kind, sources: read.sources, problems: read.problems)
    }

    private static let tooLarge = ImportError("a list larger than 8 MiB: it is not read")

    /// The first `SourceListKind.sniffLength` bytes of `input`.
    static func head(of input: FeedInput) throws(ImportError) -> [UInt8] {
        do {
            return try input.prefix(SourceListKind.sniffLength)
        } catch {
            throw error as? ImportError ?? ImportError("cannot read the list: \(error)")
        }
    }

    /// Calls `body` with each chunk of `input` until it returns false;
    /// throws when the document grows past `documentLimit`.
    static func forEachChunk(of input: FeedInput, _ body: (UnsafeRawBufferPointer) -> Bool) throws(ImportError) {
        struct Enough: Error {}
        var size = 0
        do {
            try input.forEachChunk { chunk in
                size += chunk.count
                if size > documentLimit { throw tooLarge }
                if !body(chunk) { throw Enough() }
            }
        } catch is Enough {
        } catch {
            throw error as? ImportError ?? ImportError("cannot read the list: \(error)")
        }
    }
}
