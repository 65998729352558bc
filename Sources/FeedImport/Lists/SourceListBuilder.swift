/// The sources of one list as its reader finds them: each address checked
/// and resolved, the first of a repeated location kept, the problems counted
/// and capped, and no more sources taken than the list's limit.
struct SourceListBuilder {
    /// The longest title kept, in characters; a row shows far less.
    static let titleLimit = 1000

    let base: SourceListBase
    let sourceLimit: Int
    private(set) var sources: [ListedSource] = []
    private(set) var problems: [ImportProblem] = []
    /// Whether a source past `sourceLimit` was named: the reader reads no further.
    private(set) var isFull = false
    private var locations: Set<String> = []
    private var problemCount = 0

    init(base: SourceListBase, sourceLimit: Int) {
        self.base = base
        self.sourceLimit = sourceLimit
    }

    /// Adds the source the list names at `line` as `address`, with the
    /// title (plain text already, see `plainTitle`) and site the list gives
    /// it, or reports why it cannot be one.
    mutating func add(_ address: String, title: String? = nil, site: String? = nil, line: Int) {
        guard !isFull else { return }
        let location: String
        do {
            location = try SourceLocation.resolve(address, base: base)
        } catch {
            let shown = SourceLocation.shown(address.trimmingFeedSpace())
            report(ImportProblem(line: line, reason: shown.isEmpty ? error.reason : "\(error.reason): \(shown)"))
            return
        }
        guard !locations.contains(location) else { return }
        guard sources.count < sourceLimit else {
            isFull = true
            // Past the cap of problems too: of all of them, the operator must see this one.
            problems.append(ImportProblem(line: line, reason: "more than \(sourceLimit) sources: this one and the rest are left out"))
            return
        }
        locations.insert(location)
        sources.append(ListedSource(location: location, title: title, site: site.flatMap { FeedURL.resolve($0, base: base.webURL) }, line: line))
    }

    /// Reports a problem, up to `FeedDocumentReader.problemLimit` of them, as a feed's are.
    mutating func report(_ problem: ImportProblem) {
        problemCount += 1
        if problemCount <= FeedDocumentReader.problemLimit {
            problems.append(problem)
        } else if problemCount == FeedDocumentReader.problemLimit + 1 {
            problems.append(ImportProblem(line: problem.line, reason: "more than \(FeedDocumentReader.problemLimit) problems; the rest are not reported"))
        }
    }

    /// `title` as plain text (lists often carry escaped markup), trimmed and
    /// cut to `titleLimit`; nil when nothing is left.
    static func plainTitle(_ title: String?) -> String? {
        guard let title else { return nil }
        // Markup and runs of spaces shrink; a 10 MB attribute needs no more than its start looked at.
        let text = HTMLText.plainText(String(title.prefix(titleLimit * 8)))
        return text.isEmpty ? nil : String(text.prefix(titleLimit))
    }
}
