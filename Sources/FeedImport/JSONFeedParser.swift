import Foundation

/// Reads a JSON Feed (1.0 or 1.1, https://www.jsonfeed.org/version/1.1/) into
/// raw entries, streaming: the document is scanned chunk by chunk and only one
/// item is held at a time, so a 200 MB feed imports in bounded memory.
///
/// Whole-document failures (empty, not JSON, not an object, no JSON Feed
/// `version`, no `items` array, cut off before `items`) throw `ImportError`.
/// A broken item is skipped with an `ImportProblem` naming it and its field
/// ("item 12: \"title\" is a number, not a string"); items are counted from 1.
public enum JSONFeedParser {
    /// The largest item kept, in bytes of JSON; a larger one is skipped with a problem.
    public static let itemByteLimit = 8 << 20

    /// Parses `input`, calling `onEntry` with each item in document order and
    /// `onProblem` with each part skipped.
    ///
    /// - An `id` written as a number is taken as its decimal text ("id": 12 is "12").
    /// - Bytes that are not UTF-8 are replaced with U+FFFD and the item still
    ///   imports, with a problem saying so.
    /// - A document cut off inside `items` keeps the items completed before the
    ///   cut and reports a problem at the line of the cut item.
    /// - Relative URLs of an item resolve against the feed's `home_page_url`,
    ///   else its `feed_url`, as far as they come before `items` in the document.
    ///
    /// An error thrown by `onEntry` stops the parse and is rethrown unchanged.
    public static func parse(
        _ input: FeedInput,
        onEntry: (RawEntry) throws -> Void,
        onProblem: (ImportProblem) -> Void
    ) throws -> FeedMetadata {
        try parse(input, chunkSize: nil, onEntry: onEntry, onProblem: onProblem)
    }

    /// `parse(_:onEntry:onProblem:)`, reading `.bytes` in chunks of
    /// `chunkSize` when given: tests cut documents where they want to, and
    /// the fuzz harness in `Fuzz/` (through `@_spi(Testing) import`) checks
    /// that where they are cut changes nothing.
    @_spi(Testing) public static func parse(
        _ input: FeedInput,
        chunkSize: Int?,
        onEntry: (RawEntry) throws -> Void,
        onProblem: (ImportProblem) -> Void
    ) throws -> FeedMetadata {
        var scanner = JSONFeedScanner(members: ["version", "title", "home_page_url", "feed_url"], byteLimit: itemByteLimit)
        var feed = Feed()
        func scan(_ chunk: UnsafeRawBufferPointer) throws {
            try scanner.feed(chunk) { event in try feed.handle(event, onEntry: onEntry, onProblem: onProblem) }
        }
        do {
            if let chunkSize, case .bytes(let bytes) = input {
                for start in stride(from: 0, to: bytes.count, by: chunkSize) {
                    try bytes[start..<min(bytes.count, start + chunkSize)].withUnsafeBytes(scan)
                }
            } else {
                try input.forEachChunk(scan)
            }
            try scanner.finish()
        } catch let error as JSONFeedScanner.SyntaxError {
            // Once items have been delivered, a document that breaks off keeps them.
            guard scanner.sawItems else { throw ImportError(error.message, line: error.line) }
            onProblem(ImportProblem(line: error.line, reason: error.message))
        }
        guard feed.version != nil else { throw ImportError("not a JSON Feed: no version") }
        guard scanner.sawItems else { throw ImportError("not a JSON Feed: no \"items\" array") }
        return FeedMetadata(format: .jsonFeed, title: feed.title, link: feed.homePageURL)
    }
}

/// What the parse learned of the feed so far, and the handling of each event.
private struct Feed {
    var version: String?
    var title: String?
    var homePageURL: String?
    var feedURL: String?
    let decoder = JSONDecoder()

    mutating func handle(
        _ event: JSONFeedScanner.Event, onEntry: (RawEntry) throws -> Void, onProblem: (ImportProblem) -> Void
    ) throws {
        switch event {
        case .member(let name, let json, let line):
            try member(name, json: json, line: line, onProblem: onProblem)
        case .item(let index, let json, let line):
            if let entry = item(index, json: json, line: line, onProblem: onProblem) { try onEntry(entry) }
        }
    }

    private mutating func member(
        _ name: String, json: [UInt8]?, line: Int, onProblem: (ImportProblem) -> Void
    ) throws {
        let decoded = json.flatMap { try? decode($0) }
        if name == "version" {
            guard case .string(let version)? = decoded?.value,
                version.hasPrefix("https://jsonfeed.org/version/") || version.hasPrefix("http://jsonfeed.org/version/")
            else { throw ImportError("not a JSON Feed: the version is not https://jsonfeed.org/version/…", line: line) }
            self.version = version
            return
        }
        let text: String?
        switch decoded?.value {
        case .string(let string)?: text = string
        case .null?: text = nil
        case let other?:
            onProblem(ImportProblem(line: line, reason: "the feed's \"\(name)\" is \(other.kind), not a string; ignored"))
            return
        case nil:
            let why = json == nil ? "larger than \(Self.limitText)" : "not valid JSON"
            onProblem(ImportProblem(line: line, reason: "the feed's \"\(name)\" is \(why); ignored"))
            return
        }
        if decoded?.repaired == true {
            onProblem(ImportProblem(line: line, reason: "the feed's \"\(name)\": \(Self.repairedText)"))
        }
        switch name {
        case "title": title = text
        case "home_page_url": homePageURL = text
        default: feedURL = text
        }
    }

    /// The entry of item `index`, or nil after reporting why it is skipped.
    private func item(_ index: Int, json: [UInt8]?, line: Int, onProblem: (ImportProblem) -> Void) -> RawEntry? {
        guard let json else {
            onProblem(ImportProblem(line: line, reason: "item \(index): an item larger than \(Self.limitText), skipped"))
            return nil
        }
        let decoded: (value: JSONValue, repaired: Bool)
        do {
            decoded = try decode(json)
        } catch {
            onProblem(ImportProblem(line: line, reason: "item \(index) is not valid JSON"))
            return nil
        }
        if decoded.repaired {
            onProblem(ImportProblem(line: line, reason: "item \(index): \(Self.repairedText)"))
        }
        do {
            return try JSONFeedItem.entry(decoded.value, line: line, baseURL: homePageURL ?? feedURL)
        } catch {
            onProblem(ImportProblem(line: line, reason: error.reason(item: index)))
            return nil
        }
    }

    private static let limitText = "\(JSONFeedParser.itemByteLimit >> 20) MiB"
    private static let repairedText = "bytes that are not UTF-8 replaced with U+FFFD"

    /// The value `json` holds, and whether bytes that are not UTF-8 were
    /// replaced with U+FFFD to read it. Foundation refuses such bytes; they are
    /// only looked for when it does, so that good items cost nothing more.
    private func decode(_ json: [UInt8]) throws -> (value: JSONValue, repaired: Bool) {
        do {
            return (try decoder.decode(JSONValue.self, from: Data(json)), false)
        } catch {
            guard String(validating: json, as: UTF8.self) == nil else { throw error }
            let repaired = Array(String(decoding: json, as: UTF8.self).utf8)
            return (try decoder.decode(JSONValue.self, from: Data(repaired)), true)
        }
    }
}
