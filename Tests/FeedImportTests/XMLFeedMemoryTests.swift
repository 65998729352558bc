import FeedImport
import Foundation
import Testing

/// Streaming: a large feed costs the same memory as a small one.
@Suite struct XMLFeedMemoryTests {
    /// The peak resident set size of this process so far, in bytes.
    static func peakResidentBytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        let kilobytes = try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        return kilobytes << 10
    }

    /// Writes an RSS feed of about `megabytes` MB to `path`, item by item.
    static func writeLargeFeed(to path: String, megabytes: Int) throws -> Int {
        try #require(FileManager.default.createFile(atPath: path, contents: nil))
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? file.close() }
        try file.write(contentsOf: Data("""
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

    @Test func fiftyMegabytesParseInBoundedMemory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("xmlfeed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("big.xml").path
        let written = try Self.writeLargeFeed(to: path, megabytes: 50)
        #expect(try #require(FeedInput.file(path).size) > 50 << 20)

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

        #expect(metadata == FeedMetadata(format: .rss, title: "Big", link: "https://big.example.com/"))
        #expect(count == written)
        #expect(lastTitle == "Item \(written - 1): caf\u{E9} & cr\u{E8}me")
        #expect(problems.isEmpty)
        // A parser that held the document would need far more than the file's 50 MB.
        #expect(growth < 100 << 20, "peak resident memory grew by \(growth >> 20) MB")
    }
}
