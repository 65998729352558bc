// XMLFeedParser.parse (libxml2's SAX push parser under XMLStream) on any
// document an origin can serve. The parse returns the feed, or throws an
// ImportError having delivered nothing; every entry, problem and line it
// reports is sane (FeedChecks), and an error thrown by onEntry stops it.
import FeedChecks
import FeedImport
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzXMLFeed(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = fuzzInput(data, count)
    let parse = FeedParse { onEntry, onProblem in
        try XMLFeedParser.parse(.bytes(bytes), onEntry: onEntry, onProblem: onProblem)
    }
    checkFeedParse(parse, of: bytes)
    switch parse.outcome {
    case .success(let metadata):
        check([.rss, .rdf, .atom].contains(metadata.format), "an XML feed read as \(metadata.format)")
    case .failure(let error):
        check(parse.entries.isEmpty, "\(parse.entries.count) entries delivered, then \(error)")
    }
    if !parse.entries.isEmpty {
        checkAbort { onEntry, onProblem in try XMLFeedParser.parse(.bytes(bytes), onEntry: onEntry, onProblem: onProblem) }
    }
    return 0
}
