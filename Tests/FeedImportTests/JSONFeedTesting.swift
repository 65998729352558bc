import Foundation

@_spi(Testing) @testable import FeedImport

/// What one parse of a JSON Feed gave.
struct ParsedJSONFeed {
    var metadata: FeedMetadata
    var entries: [RawEntry] = []
    var problems: [ImportProblem] = []
}

/// Parses `bytes`, cut in chunks of `chunkSize` when given.
func parseJSONFeed(bytes: [UInt8], chunkSize: Int? = nil) throws -> ParsedJSONFeed {
    var entries: [RawEntry] = []
    var problems: [ImportProblem] = []
    let metadata = try JSONFeedParser.parse(
        .bytes(bytes), chunkSize: chunkSize, onEntry: { entries.append($0) }, onProblem: { problems.append($0) })
    return ParsedJSONFeed(metadata: metadata, entries: entries, problems: problems)
}

/// Parses `text`, cut in chunks of `chunkSize` when given.
func parseJSONFeed(_ text: String, chunkSize: Int? = nil) throws -> ParsedJSONFeed {
    try parseJSONFeed(bytes: Array(text.utf8), chunkSize: chunkSize)
}

/// The `ImportError` parsing `text` throws, or nil when it throws none.
func jsonFeedImportError(_ text: String) -> ImportError? {
    do {
        _ = try parseJSONFeed(text)
        return nil
    } catch let error as ImportError {
        return error
    } catch {
        return ImportError("unexpected \(error)")
    }
}

/// A JSON Feed 1.1 document holding `items` (each already JSON), one per line
/// from line 3.
func jsonFeed(items: [String], version: String = "https://jsonfeed.org/version/1.1") -> String {
    """
    {"version": "\(version)", "title": "T", "home_page_url": "https://example.com/",
    "items": [
    \(items.joined(separator: ",\n"))
    ]}
    """
}

/// Runs `body` on a thread of its own: a test that computes for seconds would
/// otherwise hold one of the few cooperative threads other suites' waits need.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
