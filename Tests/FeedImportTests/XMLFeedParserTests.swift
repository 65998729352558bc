import FeedImport
import Testing

/// What a parse gave.
struct XMLFeedResult {
    var metadata: FeedMetadata
    var entries: [RawEntry]
    var problems: [ImportProblem]
}

func parseXMLFeed(_ bytes: [UInt8]) throws -> XMLFeedResult {
    var entries: [RawEntry] = []
    var problems: [ImportProblem] = []
    let metadata = try XMLFeedParser.parse(.bytes(bytes), onEntry: { entries.append($0) }, onProblem: { problems.append($0) })
    return XMLFeedResult(metadata: metadata, entries: entries, problems: problems)
}

func parseXMLFeed(_ text: String) throws -> XMLFeedResult {
    try parseXMLFeed(Array(text.utf8))
}

/// The formats, field by field.
@Suite struct XMLFeedParserTests {
    @Test func rss091WithTheNetscapeDoctypeAndHTMLEntities() throws {
        let result = try parseXMLFeed(XMLFeedCorpus.rss091)
        #expect(result.metadata == FeedMetadata(format: .rss, title: "Caf\u{E9} News", link: "http://news.example.com/"))
        #expect(result.problems.isEmpty)
        #expect(result.entries.count == 2)
        let first = result.entries[0]
        #expect(first.title == "Cr\u{E8}me br\u{FB}l\u{E9}e & more")
        #expect(first.summary == "D\u{E9}j\u{E0} vu \u{A9} 1999")
        #expect(first.link == "http://news.example.com/creme")
        #expect(first.baseURL == "http://news.example.com/", "the channel link, with no xml:base")
        #expect(first.line == 15)
        #expect(result.entries[1].title == "Second")
    }

    @Test func rss092WithEnclosures() throws {
        let result = try parseXMLFeed(XMLFeedCorpus.rss092)
        #expect(result.metadata.format == .rss)
        #expect(result.entries.map(\.title) == [nil, "Two"])
        #expect(result.entries[0].summary == "Episode one, <b>bold</b>")
        #expect(result.entries[0].images == [ImageCandidate(kind: .enclosure, url: "http://pod.example.com/one.mp3", mimeType: "audio/mpeg")])
        #expect(result.entries[1].images == [ImageCandidate(kind: .enclosure, url: "http://pod.example.com/two.jpg", mimeType: "image/jpeg")])
    }

    @Test func rss20WithMediaEnclosuresContentAndDates() throws {
        let result = try parseXMLFeed(XMLFeedCorpus.rss20)
        #expect(result.metadata == FeedMetadata(format: .rss, title: "Photo Blog", link: "https://photos.example.com/"))
        #expect(result.problems.isEmpty)
        #expect(result.entries.count == 3)
        let photo = result.entries[0]
        #expect(photo.title == "Sunset over the bay")
        #expect(photo.id == "photo-1001")
        #expect(photo.link == "https://photos.example.com/sunset")
        #expect(photo.published == "Tue, 10 Jun 2025 04:00:00 GMT", "the first date found wins")
        #expect(photo.updated == nil)
        #expect(photo.summary == "<p>A <em>red</em> sky.</p>")
        #expect(photo.contentHTML == "<p><img src=\"/img/sunset-full.jpg\"> Full story</p>")
        #expect(photo.baseURL == "https://photos.example.com/")
        #expect(
            photo.images == [
                ImageCandidate(kind: .own, url: "https://photos.example.com/art/sunset.jpg"),
                ImageCandidate(kind: .media, url: "https://cdn.example.com/sunset-poster.jpg", width: 320, height: 180),
                ImageCandidate(kind: .media, url: "https://cdn.example.com/sunset.jpg", width: 1600, height: 900),
                ImageCandidate(kind: .media, url: "https://cdn.example.com/sunset-typed", mimeType: "image/webp"),
                ImageCandidate(kind: .media, url: "https://cdn.example.com/sunset-small.PNG?v=2"),
                ImageCandidate(kind: .media, url: "https://cdn.example.com/g1.jpg", width: 640, height: 360, mimeType: "image/jpeg"),
                ImageCandidate(kind: .media, url: "https://cdn.example.com/g1-thumb.jpg"),
                ImageCandidate(kind: .enclosure, url: "https://cdn.example.com/sunset.mp3", mimeType: "audio/mpeg"),
                ImageCandidate(kind: .enclosure, url: "https://cdn.example.com/sunset-enc.jpg", mimeType: "image/jpeg"),
            ])
        let permalink = result.entries[1]
        #expect(permalink.id == "https://photos.example.com/p/1002")
        #expect(permalink.link == "https://photos.example.com/p/1002", "a permalink guid is the link")
        #expect(permalink.published == "2025-06-08T00:00:00Z")
        #expect(permalink.updated == "2025-06-08T12:00:00Z")
        #expect(result.entries[2].link == nil, "a guid that is not a URL is no link")
    }

    @Test func rdfItemsAreSiblingsOfTheChannel() throws {
        let result = try parseXMLFeed(XMLFeedCorpus.rdf)
        #expect(result.metadata == FeedMetadata(format: .rdf, title: "RDF Site", link: "http://rdf.example.org/"))
        #expect(result.problems.isEmpty)
        #expect(result.entries.count == 2)
        let one = result.entries[0]
        #expect(one.id == "http://rdf.example.org/one")
        #expect(one.title == "One")
        #expect(one.link == "http://rdf.example.org/one")
        #expect(one.summary == "First item")
        #expect(one.published == "2025-01-02T03:04:05Z")
        #expect(one.contentHTML == "<p>Full &amp; rich</p>")
        #expect(one.line == 15)
        #expect(result.entries[1].id == "http://rdf.example.org/two")
    }

    @Test func atomWithXMLBaseHTMLAndXHTMLContentAndEnclosures() throws {
        let result = try parseXMLFeed(XMLFeedCorpus.atom)
        #expect(result.metadata == FeedMetadata(format: .atom, title: "Atom Blog", link: "https://blog.example.net/"))
        #expect(result.problems.isEmpty)
        #expect(result.entries.count == 3)
        let fish = result.entries[0]
        #expect(fish.id == "tag:blog.example.net,2025:1")
        #expect(fish.title == "Fish &amp; <i>chips</i>", "type=html: HTML as found")
        #expect(fish.link == "fish.html")
        #expect(fish.baseURL == "https://blog.example.net/posts/2025/", "relative xml:base resolved against the feed's")
        #expect(fish.published == "2025-02-28T10:00:00Z")
        #expect(fish.updated == "2025-03-01T00:00:00Z")
        #expect(fish.summary == "Plain <summary>")
        #expect(fish.contentHTML == "<p>Hello <b>there</b> &amp; <img src=\"a.jpg\" alt=\"A &quot;quote&quot;\"><br>bye</p>")
        #expect(
            fish.images == [
                ImageCandidate(kind: .enclosure, url: "fish.png", mimeType: "image/png"),
                ImageCandidate(kind: .enclosure, url: "fish.mp3", mimeType: "audio/mpeg"),
            ])
        let second = result.entries[1]
        #expect(second.link == "/second")
        #expect(second.baseURL == "https://blog.example.net/")
        #expect(second.contentHTML == "<p>HTML <img src=\"b.jpg\"></p>")
        #expect(second.images == [ImageCandidate(kind: .media, url: "https://i.example.net/2.jpg", width: 480, height: 360)])
        let third = result.entries[2]
        #expect(third.title == "An <em>XHTML</em> title")
        #expect(third.baseURL == "https://other.example.org/x/")
        #expect(third.contentHTML == "Text content with &lt;tags&gt; &amp; ampersands", "type=text is escaped into HTML")
        #expect(third.link == nil)
    }

    @Test func undeclaredMediaPrefixIsStillMediaRSS() throws {
        let result = try parseXMLFeed("""
            <rss version="2.0"><channel><title>t</title>
            <item><title>a</title><media:thumbnail url="http://x.example/a.jpg"/></item>
            <item><title>b</title><media:thumbnail url="http://x.example/b.jpg"/></item>
            </channel></rss>
            """)
        #expect(result.entries.map(\.images) == [
            [ImageCandidate(kind: .media, url: "http://x.example/a.jpg")],
            [ImageCandidate(kind: .media, url: "http://x.example/b.jpg")],
        ])
        #expect(result.problems.count == 1, "said once: \(result.problems)")
        #expect(result.problems.first?.line == 2)
    }

    @Test func imageLookingURLs() {
        #expect(XMLFeedParserTests.looksLikeImage("http://a.example/b/c.JPEG?x=1#y"))
        #expect(!XMLFeedParserTests.looksLikeImage("http://a.example/b.jpg/c"))
        #expect(!XMLFeedParserTests.looksLikeImage("http://a.example/video.mp4"))
    }

    /// Media RSS without medium or type: an image URL is an image, a video's is not.
    static func looksLikeImage(_ url: String) -> Bool {
        let feed = "<rss><channel><item><media:content xmlns:media=\"http://search.yahoo.com/mrss/\" url=\"\(url)\"/></item></channel></rss>"
        return (try? parseXMLFeed(feed).entries.first?.images.isEmpty == false) ?? false
    }
}
