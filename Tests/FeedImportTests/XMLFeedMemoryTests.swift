import FeedImport
import Foundation
import HTTPTestClient
import Testing

/// Streaming: a large feed costs the same memory as a small one.
@Suite struct XMLFeedMemoryTests {
    /// The peak resident set size of this process so far, in bytes.
    static func peakResidentBytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
        else { throw CocoaError(.fileReadUnknown) }
        return kilobytes << 10
    }

    /// Writes an RSS feed of about `megabytes` MB to `path`, item by item.
    static func writeLargeFeed(to path: String, megabytes: Int) throws -> Int {
        guard FileManager.default.createFile(atPath: path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? file.close() }
        try file.write(
            contentsOf: Data(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:dc="http://purl.org/dc/elements/1.1/">
                <channel><title>Big</title><link>https://big.example.com/</link>

                """.utf8))
        var written = 0
        var items = 0
        var batch = ""
        while written < megabytes << 20 {
            batch += """
                <item><title>Item \(items): caf\u{E9} &amp; cr\u{E8}me</title><link>https://big.example.com/\(items)</link>
                <guid isPermaLink="false">big-\(items)</guid><dc:date>2025-01-01T00:00:00Z</dc:date>
                <description>&lt;p&gt;Paragraph \(items) with &lt;b&gt;markup&lt;/b&gt; and some words to make it longer than a line.&lt;/p&gt;</description>
                <media:content url="https://img.example.com/\(items).jpg" medium="image" width="800" height="600"/></item>

                """
            items += 1
            if batch.utf8.count > 1 << 20 {
                try file.write(contentsOf: Data(batch.utf8))
                written += batch.utf8.count
                batch = ""
            }
        }
        try file.write(contentsOf: Data((batch + "</channel></rss>\n").utf8))
        return items
    }

    @Test func fiftyMegabytesParseInBoundedMemory() async {
        // In a child process of its own (an exit test): tests running alongside in
        // this process would add their own allocations to the peak.
        await ExitTestTurns.inTurn {
            await #expect(processExitsWith: .success) {
                do {
                    guard try Self.parseFiftyMegabytes() else { exit(1) }
                } catch {
                    exit(2)
                }
            }
        }
    }

    /// Parses a generated 50 MB feed; true when every entry came, nothing was
    /// reported and the peak resident memory grew by less than 100 MB.
    static func parseFiftyMegabytes() throws -> Bool {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("xmlfeed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("big.xml").path
        let written = try Self.writeLargeFeed(to: path, megabytes: 50)
        guard let size = FeedInput.file(path).size, size > 50 << 20 else { return false }

        let before = try Self.peakResidentBytes()
        var count = 0
        var lastTitle: String?
        var problems: [ImportProblem] = []
        let metadata = try XMLFeedParser.parse(
            .file(path),
            onEntry: { entry in
                count += 1
                lastTitle = entry.title
            },
            onProblem: { problems.append($0) })
        let growth = try Self.peakResidentBytes() - before
        print("parsed \(count) of \(written) entries; peak resident memory grew by \(growth >> 20) MB")
        // A parser that held the document would need far more than the file's 50 MB.
        return metadata == FeedMetadata(format: .rss, title: "Big", link: "https://big.example.com/")
            && count == written && lastTitle == "Item \(written - 1): caf\u{E9} & cr\u{E8}me"
            && problems.isEmpty && growth < 100 << 20
    }
}
