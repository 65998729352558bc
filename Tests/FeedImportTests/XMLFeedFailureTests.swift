import FeedImport
import Foundation
import Testing

/// Sources that are not feeds, and feeds that are broken.
@Suite struct XMLFeedFailureTests {
    static func importError(_ text: String) -> ImportError? {
        importError(Array(text.utf8))
    }

    static func importError(_ bytes: [UInt8]) -> ImportError? {
        do {
            _ = try parseXMLFeed(bytes)
            return nil
        } catch {
            return error as? ImportError
        }
    }

    @Test func htmlIsNotAFeed() {
        let pages = [
            "<html><head><title>x</title></head><body><p>hi</p></body></html>",
            "<?xml version=\"1.0\"?>\n<html xmlns=\"http://www.w3.org/1999/xhtml\"><body/></html>",
            "<!doctype html>\n<html lang=en><head><meta charset=utf-8><title>Shop</title></head></html>",
            "\n  <!DOCTYPE html>\n<HTML><BODY>Hi<BR></BODY></HTML>",
            "<x:page xmlns:x=\"http://www.w3.org/1999/xhtml\"/>",
        ]
        for page in pages {
            #expect(Self.importError(page) == ImportError("an HTML page, not a feed"), "\(page)")
        }
    }

    @Test func emptyOrBlankSourceIsEmpty() {
        #expect(Self.importError("") == ImportError("empty source"))
        #expect(Self.importError(" \n\t\r\n ") == ImportError("empty source"))
    }

    @Test func emptyFileIsEmpty() throws {
        let path = NSTemporaryDirectory() + "xmlfeed-empty-\(UUID().uuidString).xml"
        try #require(FileManager.default.createFile(atPath: path, contents: Data()))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: ImportError("empty source")) {
            _ = try XMLFeedParser.parse(.file(path), onEntry: { _ in }, onProblem: { _ in })
        }
    }

    @Test func binaryIsNotXML() {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52]
        #expect(Self.importError(png) == ImportError("not XML: no XML element found (this is not XML)", line: 1))
    }

    @Test func notXMLGivesTheLineAndLibxml2sReason() throws {
        let error = try #require(Self.importError("{\"version\": \"https://jsonfeed.org/version/1.1\"}"))
        #expect(error.message == "not XML: no XML element found (this is not XML)")
        #expect(error.line == 1)
        let broken = try #require(Self.importError("\n\n<<rss>"))
        #expect(broken.message.hasPrefix("not XML: "))
        #expect(broken.line == 3)
    }

    @Test func anotherRootIsNamed() {
        #expect(Self.importError("<opml version=\"2.0\"><body/></opml>") == ImportError("not a feed: the root element is <opml>", line: 1))
        #expect(
            Self.importError("<feed xmlns=\"http://purl.org/atom/ns#\"><title>0.3</title></feed>")
                == ImportError("not a feed: the root element is <feed> (namespace http://purl.org/atom/ns#)", line: 1))
    }

    @Test func truncatedFeedKeepsTheEntriesBeforeTheCut() throws {
        let feed = """
            <rss version="2.0"><channel><title>T</title>
            <item><title>one</title></item>
            <item><title>two</title></item>
            <item><title>three is cut
            """
        let result = try parseXMLFeed(feed)
        #expect(result.entries.map(\.title) == ["one", "two"])
        #expect(result.problems.count == 1)
        #expect(result.problems.first?.line == 4)
        #expect(result.problems.first?.reason == "the document ends inside <title>: it is cut short; the entry at line 4 is skipped")
        #expect(result.metadata.title == "T")
    }

    @Test func bareAmpersandSkipsItsEntryOnly() throws {
        let feed = """
            <rss version="2.0"><channel>
            <item><title>one</title></item>
            <item><title>Fish & chips</title></item>
            <item><title>three &amp; caf&eacute;</title></item>
            </channel></rss>
            """
        let result = try parseXMLFeed(feed)
        // libxml2 recovers: the items after the bad one arrive, entities intact.
        #expect(result.entries.map(\.title) == ["one", "three & caf\u{E9}"])
        #expect(result.problems == [ImportProblem(line: 3, reason: "an '&' that starts no entity (write &amp;); the entry at line 3 is skipped")])
    }

    @Test func mismatchedTagInTheMiddle() throws {
        let feed = """
            <rss version="2.0"><channel>
            <item><title>one</title></item>
            <item><title>two</title><b>bold</item>
            <item><title>three</title></item>
            <item><title>four</title></item>
            </channel></rss>
            """
        let result = try parseXMLFeed(feed)
        // libxml2 takes </item> for </b>; the items after still arrive (inside
        // "two", as libxml2 sees it), and its end tags stay one off until the end.
        #expect(result.entries.map(\.title) == ["one", "three", "four"])
        #expect(result.problems.first == ImportProblem(line: 3, reason: "</item> closes <b>, opened at line 3; the entry at line 3 is skipped"))
        // Then </channel> closes the cut item, </rss> the channel, and <rss> is left open.
        #expect(
            result.problems.dropFirst().map(\.description) == [
                "line 6: </channel> closes <item>, opened at line 3",
                "line 6: </rss> closes <channel>, opened at line 1",
                "line 6: the document ends inside <rss>: it is cut short",
            ])
    }

    @Test func lessThanInTextStopsTheRest() throws {
        let feed = """
            <rss version="2.0"><channel>
            <item><title>one</title></item>
            <item><title>1 < 2</title></item>
            <item><title>three</title></item>
            </channel></rss>
            """
        let result = try parseXMLFeed(feed)
        #expect(result.entries.map(\.title) == ["one"])
        #expect(result.problems.first == ImportProblem(line: 3, reason: "a '<' that starts no tag (write &lt;); the entry at line 3 is skipped"))
        #expect(result.problems.last?.reason == "libxml2 gave up here: nothing after this is read")
    }

    @Test func externalEntityToPasswdIsNeverRead() throws {
        let feed = """
            <?xml version="1.0"?>
            <!DOCTYPE rss [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
            <rss version="2.0"><channel><title>&xxe;</title>
            <item><title>before &xxe; after</title><description>&xxe;</description><link>http://a.example/&xxe;</link></item>
            <item><title>clean</title></item>
            </channel></rss>
            """
        let result = try parseXMLFeed(feed)
        let everything = ([result.metadata.title] + result.entries.flatMap { [$0.title, $0.summary, $0.link] }).compactMap { $0 }
        #expect(!everything.joined().contains("root:"))
        #expect(result.entries.map(\.title) == ["clean"], "the entry with the undefined entity is skipped")
        #expect(result.problems.allSatisfy { $0.reason.contains("Entity 'xxe' not defined") })
    }

    @Test func billionLaughsExpandsNothing() throws {
        var feed = "<?xml version=\"1.0\"?>\n<!DOCTYPE rss [\n<!ENTITY lol \"lol\">\n"
        for level in 1...9 {
            feed += "<!ENTITY lol\(level) \"\(String(repeating: "&lol\(level == 1 ? "" : String(level - 1));", count: 10))\">\n"
        }
        feed += "]>\n<rss><channel><item><title>&lol9;</title></item><item><title>fine</title></item></channel></rss>\n"
        let result = try parseXMLFeed(feed)
        #expect(result.entries.map(\.title) == ["fine"])
        #expect(result.problems.count == 1)
        #expect(result.problems.first?.line == 14)
    }

    struct Abort: Error, Equatable {
        var after: String?
    }

    @Test func onEntryThrowingAbortsAndPropagatesUnchanged() {
        var feed = "<rss><channel>"
        for index in 0..<1000 { feed += "<item><title>\(index)</title></item>" }
        feed += "</channel></rss>"
        var seen: [String?] = []
        var problems: [ImportProblem] = []
        #expect(throws: Abort(after: "2")) {
            _ = try XMLFeedParser.parse(
                .bytes(Array(feed.utf8)),
                onEntry: { entry in
                    seen.append(entry.title)
                    if seen.count == 3 { throw Abort(after: entry.title) }
                },
                onProblem: { problems.append($0) })
        }
        #expect(seen == ["0", "1", "2"], "nothing is read after the throw")
        #expect(problems.isEmpty)
    }

    @Test func problemsAreCapped() throws {
        var feed = "<rss><channel>\n"
        for index in 0..<300 { feed += "<item><title>\(index) & bad</title></item>\n<item><title>ok</title></item>\n" }
        feed += "</channel></rss>"
        let result = try parseXMLFeed(feed)
        #expect(result.entries.count == 300)
        #expect(result.problems.count == 101)
        #expect(result.problems.last?.reason == "more than 100 problems; the rest are not reported")
    }
}

