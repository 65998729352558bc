import Foundation
import Testing

@testable import FeedImport

@Suite struct EntryBuilderTests {
    let builder = EntryBuilder(sourceURL: "https://example.org/blog/feed.xml", now: Date(timeIntervalSince1970: 2_000_000_000))

    func build(_ raw: RawEntry) throws -> ImportedEntry {
        try builder.build(raw).get()
    }

    @Test func imagesRankOwnThenMediaThenEnclosureThenContent() throws {
        var raw = RawEntry(id: "1", title: "t", contentHTML: "<img src=content.jpg>")
        #expect(try build(raw).imageURL == "https://example.org/blog/content.jpg")
        raw.images.append(ImageCandidate(kind: .enclosure, url: "enc.jpg", mimeType: "image/jpeg"))
        #expect(try build(raw).imageURL == "https://example.org/blog/enc.jpg")
        raw.images.append(ImageCandidate(kind: .media, url: "/media.png", width: 800, height: 600))
        #expect(try build(raw).imageURL == "https://example.org/media.png")
        #expect(try build(raw).imageWidth == 800)
        raw.images.append(ImageCandidate(kind: .own, url: "https://cdn.example.com/own.webp"))
        #expect(try build(raw).imageURL == "https://cdn.example.com/own.webp")
    }

    /// Found by Fuzz/FuzzJSONFeed: an item with only a link took its title from
    /// the link's host as Foundation decodes it, control characters and all.
    @Test func aTitleFromTheLinksHostHoldsNoControlCharacter() throws {
        let raw = RawEntry(id: "a", link: "https://elsewh\u{FF}\u{7F}ere.example/")
        let title = try build(raw).title
        #expect(!title.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(title.debugDescription)")
        #expect(try build(RawEntry(id: "b", link: "https://news.example/post")).title == "news.example")
    }

    @Test func nonImagesAndHostileURLsAreSkipped() throws {
        let raw = RawEntry(
            id: "1", title: "t", link: "javascript:alert(1)",
            images: [
                ImageCandidate(kind: .own, url: "data:image/png;base64,AAAA"),
                ImageCandidate(kind: .media, url: "file:///etc/passwd"),
                ImageCandidate(kind: .enclosure, url: "episode.mp3", mimeType: "audio/mpeg"),
                ImageCandidate(kind: .enclosure, url: "no-type-no-extension"),
                ImageCandidate(kind: .enclosure, url: "ok.PNG?size=2"),
            ]
        )
        let entry = try build(raw)
        #expect(entry.link == nil)
        #expect(entry.imageURL == "https://example.org/blog/ok.PNG?size=2")
    }

    @Test func fileImagesOnlyForFolders() throws {
        let raw = RawEntry(id: "f", title: "t", images: [ImageCandidate(kind: .own, url: "file:///photos/a.jpg")])
        #expect(try build(raw).imageURL == nil)
        let folder = EntryBuilder(allowFileImages: true)
        #expect(try folder.build(raw).get().imageURL == "file:///photos/a.jpg")
    }

    @Test func xmlBaseWinsOverTheSourceURL() throws {
        let raw = RawEntry(id: "1", title: "t", link: "post/1", baseURL: "https://other.example/base/")
        #expect(try build(raw).link == "https://other.example/base/post/1")
        let protocolRelative = RawEntry(id: "2", title: "t", link: "//cdn.example.net/x")
        #expect(try build(protocolRelative).link == "https://cdn.example.net/x")
    }

    @Test func keysFallBackFromIdToLinkToDigest() throws {
        #expect(try build(RawEntry(id: " abc ", title: "t", link: "/a")).guid == "abc")
        #expect(try build(RawEntry(title: "t", link: "/a")).guid == "https://example.org/a")
        let first = try build(RawEntry(title: "same", summary: "text"))
        let again = try build(RawEntry(title: "same", summary: "text"))
        #expect(first.guid == again.guid)
        #expect(first.guid.hasPrefix("digest:"))
        #expect(try build(RawEntry(id: String(repeating: "x", count: 2000), title: "t")).guid.hasPrefix("digest:"))
    }

    @Test func textIsPlainAndBounded() throws {
        let entry = try build(RawEntry(
            id: "1", title: "<b>Bold</b> &amp; <script>alert(1)</script>title",
            summary: String(repeating: "word ", count: 1000)
        ))
        #expect(entry.title == "Bold & title")
        #expect(entry.summary.count <= EntryBuilder.summaryLimit)
        #expect(entry.summary.hasSuffix("…"))
        let huge = try build(RawEntry(id: "2", title: String(repeating: "é", count: 1 << 20)))
        #expect(huge.title.count == EntryBuilder.titleLimit)
    }

    @Test func emptyItemsAreRefusedWithTheirLine() {
        let result = builder.build(RawEntry(line: 42, id: "x", title: "  ", summary: "<p></p>"))
        #expect(throws: ImportProblem(line: 42, reason: "an empty item: no title, text, link or image")) { try result.get() }
    }

    @Test func titleFallsBackToSummaryOrHost() throws {
        #expect(try build(RawEntry(id: "1", summary: "Only a summary here")).title == "Only a summary here")
        #expect(try build(RawEntry(id: "1", summary: "Only a summary here")).summary == "")
        #expect(try build(RawEntry(id: "2", link: "https://news.example/x")).title == "news.example")
    }

    @Test func datesFromPublishedThenUpdatedAndNotFromTheFuture() throws {
        #expect(try build(RawEntry(id: "1", title: "t", published: "2002-09-07T00:00:01Z")).published == Date(timeIntervalSince1970: 1_031_356_801))
        #expect(try build(RawEntry(id: "1", title: "t", published: "garbage", updated: "2002-09-07T00:00:01Z")).published == Date(timeIntervalSince1970: 1_031_356_801))
        #expect(try build(RawEntry(id: "1", title: "t", published: "2099-01-01T00:00:00Z")).published == nil)
        #expect(try build(RawEntry(id: "1", title: "t")).published == nil)
    }
}
