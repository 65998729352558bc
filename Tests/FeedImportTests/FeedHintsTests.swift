import FeedImport
import Testing

/// RSS's `ttl`, `skipHours` and `skipDays`: read at the channel, kept only in range.
@Suite struct FeedHintsTests {
    static func hints(_ channel: String) throws -> FeedHints {
        try parseXMLFeed("<rss version=\"2.0\"><channel><title>T</title>\(channel)<item><title>one</title></item></channel></rss>")
            .metadata.hints
    }

    @Test func ttlAndSkipsAreRead() throws {
        let hints = try Self.hints(
            """
            <ttl> 60 </ttl>
            <skipHours><hour>0</hour><hour>1</hour><hour>23</hour></skipHours>
            <skipDays><day>Saturday</day><day>sunday</day><day>MONDAY</day></skipDays>
            """)
        #expect(hints == FeedHints(ttlMinutes: 60, skipHours: [0, 1, 23], skipDays: [6, 0, 1]))
    }

    @Test func outOfRangeHintsAreIgnored() throws {
        let hints = try Self.hints(
            """
            <skipHours><hour>25</hour><hour>-1</hour><hour>noon</hour><hour>24</hour><hour>7</hour></skipHours>
            <skipDays><day>Funday</day><day></day><day>Friday</day></skipDays>
            """)
        #expect(hints == FeedHints(skipHours: [0, 7], skipDays: [5]), "24 is midnight; the rest are ignored")
        for ttl in ["0", "-5", "525601", "99999999999999999999", "an hour", "1.5"] {
            #expect(try Self.hints("<ttl>\(ttl)</ttl>").ttlMinutes == nil, "\(ttl)")
        }
        #expect(try Self.hints("<ttl>525600</ttl>").ttlMinutes == 525_600)
        #expect(try Self.hints("<ttl>1</ttl>").ttlMinutes == 1)
    }

    @Test func hintsAreReadOnlyAtTheChannel() throws {
        let hints = try Self.hints(
            """
            <image><ttl>5</ttl><skipHours><hour>3</hour></skipHours></image>
            <item><ttl>10</ttl><skipDays><day>Monday</day></skipDays></item>
            <skipHours><day>Monday</day><extra><hour>4</hour></extra></skipHours>
            <skipDays><hour>5</hour></skipDays>
            """)
        #expect(hints.isEmpty, "a ttl or skip list elsewhere, or the wrong child, says nothing")
    }

    @Test func otherFormatsHaveNoHints() throws {
        let atom = try parseXMLFeed(
            """
            <feed xmlns="http://www.w3.org/2005/Atom"><title>A</title><ttl>60</ttl>
            <skipHours><hour>1</hour></skipHours><entry><id>x</id><title>one</title></entry></feed>
            """)
        #expect(atom.metadata.hints.isEmpty)
        let rdf = try parseXMLFeed(
            """
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
            <channel rdf:about="http://r.example/"><title>R</title><ttl>60</ttl></channel>
            <item rdf:about="http://r.example/1"><title>one</title></item></rdf:RDF>
            """)
        #expect(rdf.metadata.hints.isEmpty)
        #expect(try parseXMLFeed(XMLFeedCorpus.rss091).metadata.hints.isEmpty)
    }

    @Test func entriesAroundTheHintsAreUnchanged() throws {
        let result = try parseXMLFeed(
            """
            <rss version="2.0"><channel><title>T</title><link>https://t.example/</link><ttl>30</ttl>
            <skipDays><day>Tuesday</day></skipDays>
            <item><title>one</title></item><item><title>two</title></item></channel></rss>
            """)
        #expect(result.entries.map(\.title) == ["one", "two"])
        #expect(result.metadata == FeedMetadata(format: .rss, title: "T", link: "https://t.example/", hints: FeedHints(ttlMinutes: 30, skipDays: [2])))
        #expect(result.problems.isEmpty)
    }
}
