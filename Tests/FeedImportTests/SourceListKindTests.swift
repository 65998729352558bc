import FeedImport
import Foundation
import Testing

/// Telling a list from a feed from neither, by the first bytes.
@Suite struct SourceListKindTests {
    static func kind(_ text: String) -> SourceListKind? {
        SourceListKind.sniff(Array(text.utf8))
    }

    @Test func opmlIsTold() {
        #expect(Self.kind(opml("")) == .opml)
        #expect(Self.kind("\u{FEFF}\n  <!-- exported -->\n<!DOCTYPE opml>\n<?xml-stylesheet href=\"x.xsl\"?>\n<opml version=\"1.0\"/>") == .opml)
        #expect(Self.kind("<OPML version=\"1.0\"><body/></OPML>") == .opml)
        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in "<?xml version=\"1.0\" encoding=\"UTF-16\"?><opml version=\"2.0\"><body/></opml>".utf16 {
            utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)]
        }
        #expect(SourceListKind.sniff(utf16) == .opml)
    }

    @Test func feedsAreFeeds() {
        #expect(Self.kind(XMLFeedCorpus.rss20) == .feed)
        #expect(Self.kind(XMLFeedCorpus.rss091) == .feed, "a DOCTYPE before the root")
        #expect(Self.kind("<feed xmlns=\"http://www.w3.org/2005/Atom\"><title>A</title></feed>") == .feed)
        #expect(Self.kind("  \n{\"version\": \"https://jsonfeed.org/version/1.1\", \"title\": \"J\", \"items\": []}") == .feed)
        #expect(Self.kind("<!doctype html><html><body>a page</body></html>") == .feed, "the feed reader says it is a page")
        let longComment = "<?xml version=\"1.0\"?><!--" + String(repeating: "x", count: 5000) + "--><opml/>"
        #expect(Self.kind(longComment) == .feed, "XML whose root is past the first 4 KiB: the feed reader names it")
    }

    @Test func plainListsAreTold() {
        #expect(Self.kind("https://a.example/feed\nfeed://b.example/\nfile:///srv/c.xml\n") == .plainList)
        #expect(Self.kind("# mine\n\n/srv/feeds/a.xml\n./b.xml\n../c.json\nfeeds/d.rss\nnews.xml\n") == .plainList)
        #expect(Self.kind("# all off\n") == .plainList)
        let long = (1...400).map { "https://s.example/feeds/\($0).xml" }.joined(separator: "\n")
        #expect(Self.kind(long) == .plainList, "the line cut at 4 KiB does not count")
        #expect(Self.kind("https://s.example/x" + String(repeating: "é", count: 3000)) == .plainList, "one long line, cut inside a character")
        #expect(Self.kind("https://a.example/\njavascript:alert(1)\nhtps://typo.example/\n") == .plainList, "the reader says what is wrong with those")
    }

    @Test func garbageIsNothing() {
        #expect(Self.kind("") == nil)
        #expect(Self.kind(" \n\t\r\n") == nil)
        #expect(Self.kind("\u{FEFF}") == nil)
        #expect(Self.kind("Hello, world.\nThis is a letter, not a list.\n") == nil)
        #expect(Self.kind("https://a.example/\nand then some prose\n") == nil, "one line of prose is enough")
        #expect(Self.kind("[1, 2, 3]") == nil, "a JSON array is no feed")
        #expect(Self.kind("just-a-word") == nil)
        #expect(Self.kind("Note:") == nil)
        #expect(SourceListKind.sniff([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D]) == nil)
        #expect(SourceListKind.sniff(Array("https://a.example/\n".utf8) + [0xC3, 0x28, 0x0A]) == nil, "not UTF-8")
    }

    @Test func readSaysWhyNothingWasRead() {
        #expect(listError("") == ImportError("empty source"))
        #expect(listError("\u{FEFF}  \n") == ImportError("empty source"))
        #expect(listError("Dear operator,\nthis is not a list.") == ImportError("neither a feed nor a list of sources (OPML, or one address a line)"))
    }
}
