import FeedImport
import Foundation
import FuzzSupport

/// What one parse gave: what it delivered, and how it ended.
public struct FeedParse {
    /// The entries delivered, in order.
    public var entries: [RawEntry] = []
    /// The problems reported, in order.
    public var problems: [ImportProblem] = []
    /// The feed's metadata, or the whole-document failure.
    public var outcome: Result<FeedMetadata, ImportError>

    /// Runs `parse` (`XMLFeedParser.parse` or `JSONFeedParser.parse`, or a
    /// closure around one) with collecting callbacks. Anything thrown other
    /// than an `ImportError` breaks the parsers' contract and stops the run.
    public init(_ parse: ((RawEntry) throws -> Void, (ImportProblem) -> Void) throws -> FeedMetadata) {
        var entries: [RawEntry] = []
        var problems: [ImportProblem] = []
        do {
            outcome = .success(try parse({ entries.append($0) }, { problems.append($0) }))
        } catch let error as ImportError {
            outcome = .failure(error)
        } catch {
            check(false, "threw \(type(of: error)) \(error), not an ImportError")
            outcome = .failure(ImportError("unreachable"))
        }
        self.entries = entries
        self.problems = problems
    }
}

/// The properties every parse of `bytes` has, whatever the format.
public func checkFeedParse(_ parse: FeedParse, of bytes: [UInt8]) {
    if case .failure(let error) = parse.outcome {
        check(!error.message.isEmpty, "an ImportError with no message")
        checkLine(error.line, in: bytes, "the ImportError \(error)")
    }
    var previous = 0
    for entry in parse.entries {
        checkLine(entry.line, in: bytes, "entry \(entry)")
        check(entry.line >= previous, "entry at line \(entry.line) delivered after one at line \(previous)")
        previous = entry.line
        checkBuilt(entry)
    }
    for problem in parse.problems {
        check(!problem.reason.isEmpty, "a problem with no reason")
        checkLine(problem.line, in: bytes, "problem \(problem)")
    }
}

/// `onEntry` throwing at the first entry stops the parse: the error comes out
/// unchanged and nothing more is delivered.
public func checkAbort(_ parse: ((RawEntry) throws -> Void, (ImportProblem) -> Void) throws -> FeedMetadata) {
    struct Abort: Error {}
    var delivered = 0
    do {
        _ = try parse({ _ in
            delivered += 1
            throw Abort()
        }, { _ in })
        check(false, "onEntry threw at an entry and the parse returned")
    } catch is Abort {
        check(delivered == 1, "\(delivered) entries delivered after onEntry threw")
    } catch {
        check(false, "onEntry threw and the parse threw \(error) instead")
    }
}

/// A source line is 1-based and within the source (a CR alone can end a line in XML).
private func checkLine(_ line: Int?, in bytes: [UInt8], _ what: @autoclosure () -> String) {
    guard let line else { return }
    let lineBreaks = bytes.count { $0 == 0x0A || $0 == 0x0D }
    check(line >= 1 && line <= lineBreaks + 1, "\(what()): line \(line) in a source of \(lineBreaks + 1) lines")
}

/// The clock `EntryBuilder` reads, fixed so that a run is repeatable.
private let now = Date(timeIntervalSince1970: 1_800_000_000)

/// What `EntryBuilder` promises of an entry it keeps: plain one-line text
/// within the limits, only http(s) URLs with a host, sane image sizes, a key,
/// no date more than a day ahead.
private func checkBuilt(_ raw: RawEntry) {
    guard case .success(let entry) = EntryBuilder(sourceURL: "https://feed.example/feed", now: now).build(raw) else { return }
    check(!entry.title.isEmpty, "an entry with an empty title from \(raw)")
    check(entry.title.count <= EntryBuilder.titleLimit, "a title of \(entry.title.count) characters")
    check(entry.summary.count <= EntryBuilder.summaryLimit, "a summary of \(entry.summary.count) characters")
    checkPlain(entry.title, "title")
    checkPlain(entry.summary, "summary")
    checkWebURL(entry.link, "link")
    checkWebURL(entry.imageURL, "image")
    for size in [entry.imageWidth, entry.imageHeight] {
        check(size.map { (1...100_000).contains($0) } ?? true, "an image size of \(size!)")
    }
    check(!entry.guid.isEmpty, "an empty key from \(raw)")
    check(entry.published.map { $0 <= now.addingTimeInterval(86_400) } ?? true, "a date in the future: \(entry.published!)")
}

/// `HTMLText.plainText`'s promise: no control character, runs of white space
/// collapsed to one space, trimmed.
private func checkPlain(_ text: String, _ what: String) {
    check(!text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(what) \(text.debugDescription) holds a control character")
    check(!text.hasPrefix(" ") && !text.hasSuffix(" ") && !text.contains("  "), "\(what) \(text.debugDescription) is not trimmed")
}

/// `FeedURL.resolve`'s promise for a feed: http or https, with a host.
private func checkWebURL(_ url: String?, _ what: String) {
    guard let url else { return }
    let parsed = URL(string: url)
    let scheme = parsed?.scheme?.lowercased()
    check(scheme == "http" || scheme == "https", "\(what) URL \(url.debugDescription) is not http(s)")
    check(!(parsed?.host ?? "").isEmpty, "\(what) URL \(url.debugDescription) has no host")
}
