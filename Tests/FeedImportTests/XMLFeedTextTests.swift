import FeedImport
import Testing

/// Encodings and sizes.
@Suite struct XMLFeedTextTests {
    static func item(_ title: String) -> String { "<item><title>\(title)</title></item>" }

    @Test func iso88591Declared() throws {
        let feed = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<rss><channel><title>Caf\u{E9}</title>\(Self.item("cr\u{E8}me \u{BD}"))</channel></rss>"
        let result = try parseXMLFeed(feed.unicodeScalars.map { UInt8($0.value) })
        #expect(result.metadata.title == "Caf\u{E9}")
        #expect(result.entries.map(\.title) == ["cr\u{E8}me \u{BD}"])
        #expect(result.problems.isEmpty)
    }

    @Test func utf8DeclaredButLatin1BytesAreReadAsWindows1252() throws {
        let bytes = Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rss><channel>\n\(Self.item("one \u{263A}"))\n<item><title>caf".utf8)
            + [0xE9, 0x20, 0x93, 0x6F, 0x6B, 0x94] + Array("</title></item>\n\(Self.item("three"))</channel></rss>".utf8)
        let result = try parseXMLFeed(bytes)
        #expect(result.entries.map(\.title) == ["one \u{263A}", "caf\u{E9} \u{201C}ok\u{201D}", "three"])
        #expect(result.problems == [ImportProblem(line: 4, reason: "bytes that are not UTF-8, read as windows-1252")])
    }

    @Test func utf16WithByteOrderMark() throws {
        let feed = "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<rss><channel>\(Self.item("\u{65E5}\u{672C} \u{1F600} caf\u{E9}"))</channel></rss>"
        let littleEndian: [UInt8] = [0xFF, 0xFE] + feed.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let bigEndian: [UInt8] = [0xFE, 0xFF] + feed.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        for bytes in [littleEndian, bigEndian] {
            let result = try parseXMLFeed(bytes)
            #expect(result.entries.map(\.title) == ["\u{65E5}\u{672C} \u{1F600} caf\u{E9}"])
            #expect(result.entries.first?.line == 2)
            #expect(result.problems.isEmpty)
        }
    }

    @Test func aOneMegabyteTitleImports() throws {
        let title = String(repeating: "Long title \u{E9}t\u{E9}. ", count: 1 << 16)
        #expect(title.utf8.count > 1 << 20)
        let result = try parseXMLFeed("<rss><channel>\(Self.item(title))\(Self.item("next"))</channel></rss>")
        #expect(result.entries.count == 2)
        #expect(result.entries.first?.title == title.trimmingCharacters(in: " "))
        #expect(result.problems.isEmpty)
    }

    @Test func anEntryWithAFieldOverFourMiBIsSkipped() throws {
        let huge = String(repeating: "&lt;p&gt;word ", count: (4 << 20) / 6)
        let feed = "<rss><channel>\n\(Self.item("before"))\n<item>\n<title>big</title><description>\(huge)</description></item>\n\(Self.item("after"))</channel></rss>"
        let result = try parseXMLFeed(feed)
        #expect(result.entries.map(\.title) == ["before", "after"])
        #expect(result.problems == [ImportProblem(line: 3, reason: "a field larger than 4 MiB")])
    }

    @Test func aFieldJustUnderFourMiBImports() throws {
        let content = String(repeating: "x", count: (4 << 20) - 10)
        let result = try parseXMLFeed("<rss><channel><item><description><![CDATA[<p>\(content)]]></description></item></channel></rss>")
        #expect(result.entries.first?.summary?.utf8.count == (4 << 20) - 7)
        #expect(result.problems.isEmpty)
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var text = Substring(self)
        while let last = text.last, set.contains(last) { text.removeLast() }
        while let first = text.first, set.contains(first) { text.removeFirst() }
        return String(text)
    }
}
