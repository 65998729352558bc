// TEMPORARY stand-in until the XML parser lands from its branch.
public enum XMLFeedParser {
    public static func parse(_ input: FeedInput, onEntry: (RawEntry) throws -> Void, onProblem: (ImportProblem) -> Void) throws -> FeedMetadata { throw ImportError("pending") }
}
