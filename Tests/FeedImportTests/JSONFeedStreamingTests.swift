import Foundation
import HTTPTestClient
import Testing

@testable import FeedImport

/// Documents cut into chunks at every awkward place.
@Suite struct JSONFeedChunkTests {
    /// A JSON string's inside with every kind of escape, and raw multi-byte UTF-8.
    static let escapedJSON = #"a\"b\\c\u00e9d\ud83d\ude00e\/f\n\té😀g"#
    /// What `escapedJSON` means.
    static let escapedText = "a\"b\\céd😀e/f\n\té😀g"

    @Test func readsEscapesCutAtEveryChunkSize() throws {
        let text = jsonFeed(items: [
            #"{"id": "1", "title": "\#(Self.escapedJSON)", "tags": ["]", "}", "\"", {"a": [[]]}]}"#,
            #"{"id": "2", "summary": "\#(Self.escapedJSON)", "image": "x.jpg"}"#,
            #"{"id": 3}"#,
        ])
        let whole = try parseJSONFeed(text)
        #expect(whole.entries.map(\.id) == ["1", "2", "3"])
        #expect(whole.entries.first?.title == Self.escapedText)
        #expect(whole.entries.dropFirst().first?.summary == Self.escapedText)
        for chunkSize in 1...17 {
            let parsed = try parseJSONFeed(text, chunkSize: chunkSize)
            #expect(parsed.entries == whole.entries, "chunks of \(chunkSize)")
            #expect(parsed.metadata == whole.metadata, "chunks of \(chunkSize)")
            #expect(parsed.problems == [], "chunks of \(chunkSize)")
        }
    }

    @Test func readsEscapesAcrossTheRealChunkBoundary() throws {
        let head = #"{"version": "https://jsonfeed.org/version/1.1", "items": [{"id": "pad", "title": ""#
        let middle = #""},"# + "\n" + #"{"id": "t", "title": ""#
        let tail = #""}]}"#
        // Moves the escaped title across the 64 KiB boundary one byte at a time.
        for shift in 0...Self.escapedJSON.utf8.count {
            let padding = FeedInput.chunkSize - shift - head.utf8.count - middle.utf8.count
            let text = head + String(repeating: "x", count: padding) + middle + Self.escapedJSON + tail
            #expect(text.utf8.count > FeedInput.chunkSize)
            var entries: [RawEntry] = []
            _ = try JSONFeedParser.parse(
                .bytes(Array(text.utf8)), onEntry: { entries.append($0) }, onProblem: { Issue.record("\($0)") })
            #expect(entries.map(\.title) == [String(repeating: "x", count: padding), Self.escapedText], "shift \(shift)")
            #expect(entries.map(\.line) == [1, 2])
        }
    }
}

/// Large documents, one at a time so that each one's peak memory is its own.
@Suite(.serialized) struct JSONFeedLargeTests {
    @Test func importsAOneMegabyteTitle() throws {
        let title = String(repeating: "Long title é ", count: 80_000)
        let parsed = try parseJSONFeed(jsonFeed(items: [#"{"id": "big", "title": "\#(title)"}"#, #"{"id": "next"}"#]))
        #expect(parsed.entries.map(\.id) == ["big", "next"])
        #expect(parsed.entries.first?.title == title)
        #expect(parsed.problems == [])
    }

    @Test func skipsAnItemOverEightMebibytes() throws {
        let html = String(repeating: "<p>a paragraph</p>", count: (JSONFeedParser.itemByteLimit / 18) + 10)
        let text = jsonFeed(items: [#"{"id": "1"}"#, #"{"id": "huge", "content_html": "\#(html)"}"#, #"{"id": "3"}"#])
        let parsed = try parseJSONFeed(text)
        #expect(parsed.entries.map(\.id) == ["1", "3"])
        #expect(parsed.problems == [ImportProblem(line: 4, reason: "item 2: an item larger than 8 MiB, skipped")])
    }

    @Test func streamsAMillionItemsInBoundedMemory() async {
        // In a child process of its own (an exit test): tests running alongside in
        // this process would add their own allocations to the peak.
        await ExitTestTurns.inTurn {
            await #expect(processExitsWith: .success) {
                do {
                    guard try Self.millionItemsInBoundedMemory() else { exit(1) }
                } catch {
                    exit(2)
                }
            }
        }
    }

    /// Writes and parses a feed of a million tiny items; true when all came, in
    /// order, with no problem, and the peak resident memory grew by under 100 MiB.
    static func millionItemsInBoundedMemory() throws -> Bool {
        let count = 1_000_000
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("jsonfeed-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.writeTinyItems(count, to: path)
        let run = try Self.parseCounting(path)
        print("delivered \(run.delivered); peak resident memory grew by \(run.growth >> 20) MiB")
        return run.delivered == count && run.problems.isEmpty && run.last?.id == "\(count - 1)"
            && run.last?.line == count + 1 && run.last?.link == "https://example.com/\(count - 1)"
            && run.growth < 100 << 20
    }

    /// What a parse that keeps nothing but a count gave.
    private struct CountingRun: Sendable {
        var delivered = 0
        var last: RawEntry?
        var problems: [ImportProblem] = []
        var growth = 0
    }

    /// Parses the file at `path`, keeping only the count, the last entry and the problems.
    private static func parseCounting(_ path: String) throws -> CountingRun {
        var run = CountingRun()
        run.growth = try peakMemoryGrowth {
            _ = try JSONFeedParser.parse(
                .file(path),
                onEntry: { entry in
                    run.delivered += 1
                    run.last = entry
                },
                onProblem: { run.problems.append($0) })
        }
        return run
    }

    /// A JSON Feed of `count` small items, one per line from line 2, written in batches.
    private static func writeTinyItems(_ count: Int, to path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil), let file = FileHandle(forWritingAtPath: path)
        else { throw ImportError("cannot create \(path)") }
        defer { try? file.close() }
        try file.write(contentsOf: Data(#"{"version": "https://jsonfeed.org/version/1.1", "items": ["#.utf8))
        for batch in stride(from: 0, to: count, by: 10_000) {
            var text = ""
            for index in batch..<min(count, batch + 10_000) {
                text += index == 0 ? "\n" : ",\n"
                text += #"{"id": "\#(index)", "title": "Item \#(index)", "url": "https://example.com/\#(index)"}"#
            }
            try file.write(contentsOf: Data(text.utf8))
        }
        try file.write(contentsOf: Data("\n]}\n".utf8))
    }

    /// How much the process's peak resident memory grew while `body` ran, in bytes.
    private static func peakMemoryGrowth(_ body: () throws -> Void) throws -> Int {
        // Writing 5 to clear_refs resets the peak to the current resident size,
        // so that earlier tests' peaks do not hide this one's.
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        guard let before = Self.statusKiB("VmHWM") else { throw ImportError("no VmHWM") }
        try body()
        guard let after = Self.statusKiB("VmHWM") else { throw ImportError("no VmHWM") }
        return (after - before) << 10
    }

    /// A field of /proc/self/status, in KiB.
    private static func statusKiB(_ field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ")[0])
        }
        return nil
    }
}
