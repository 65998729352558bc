// JSONFeedParser.parse (a streaming scanner, then Foundation's decoder per
// item) on any document an origin can serve. The parse returns the feed or
// throws an ImportError; every entry, problem and line it reports is sane
// (FeedChecks); an error thrown by onEntry stops it; and where the document
// is cut into chunks changes nothing: not an entry, a problem or a line.
@_spi(Testing) import FeedImport
import FeedChecks
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONFeed(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = fuzzInput(data, count)
    let whole = FeedParse { onEntry, onProblem in
        try JSONFeedParser.parse(.bytes(bytes), onEntry: onEntry, onProblem: onProblem)
    }
    checkFeedParse(whole, of: bytes)
    if case .success(let metadata) = whole.outcome {
        check(metadata.format == .jsonFeed, "a JSON Feed read as \(metadata.format)")
    }
    // One byte at a time, and an odd size that moves every boundary.
    for chunkSize in [1, 7] {
        let chunked = FeedParse { onEntry, onProblem in
            try JSONFeedParser.parse(.bytes(bytes), chunkSize: chunkSize, onEntry: onEntry, onProblem: onProblem)
        }
        check(chunked.outcome == whole.outcome, "in chunks of \(chunkSize): \(chunked.outcome), whole: \(whole.outcome)")
        check(chunked.entries == whole.entries, "in chunks of \(chunkSize): entries \(chunked.entries), whole: \(whole.entries)")
        check(chunked.problems == whole.problems, "in chunks of \(chunkSize): problems \(chunked.problems), whole: \(whole.problems)")
    }
    if !whole.entries.isEmpty {
        checkAbort { onEntry, onProblem in try JSONFeedParser.parse(.bytes(bytes), onEntry: onEntry, onProblem: onProblem) }
    }
    return 0
}
