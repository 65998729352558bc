import Testing
import XMLStream

@Suite struct StreamingTests {
    static let document = """
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:content="http://purl.org/rss/1.0/modules/content/">
          <channel xml:base="http://example.com/">
            <item>
              <title>Caf\u{E9} &amp; cr\u{E8}me &#x263A; &lt;b&gt;</title>
              <content:encoded><![CDATA[<p>Hello & <b>world</b></p>]]></content:encoded>
              <media:content url="a.jpg?x=1&amp;y=2" medium="image" width="640"/>
              <empty></empty>
            </item>
          </channel>
        </rss>
        """

    @Test func elementsNamespacesAttributesTextAndCDATA() {
        let recorder = record(Self.document)
        #expect(recorder.errors.isEmpty)
        let elements = recorder.startedElements
        #expect(elements.map(\.name.qualifiedName) == ["rss", "channel", "item", "title", "content:encoded", "media:content", "empty"])
        #expect(elements[0].name == XMLName(localName: "rss"))
        #expect(elements[0].attribute("version") == "2.0")
        #expect(elements[0].attributes.count == 1, "namespace declarations are not attributes")
        #expect(elements[1].attribute("base", in: XMLName.xmlNamespace) == "http://example.com/")
        #expect(elements[4].name == XMLName(localName: "encoded", namespaceURI: "http://purl.org/rss/1.0/modules/content/", prefix: "content"))
        #expect(elements[5].name.is("content", in: "http://search.yahoo.com/mrss/"))
        #expect(elements[5].attribute("url") == "a.jpg?x=1&y=2")
        #expect(elements[5].attribute("width") == "640")
        #expect(recorder.texts == ["Caf\u{E9} & cr\u{E8}me \u{263A} <b>", "<p>Hello & <b>world</b></p>"])
        #expect(recorder.events.filter { if case .end = $0 { true } else { false } }.count == elements.count)
    }

    @Test func oneByteChunksDeliverTheSameDocument() {
        let whole = record(Self.document)
        for size in [1, 2, 3, 7] {
            let chunked = record(Self.document, chunkSize: size)
            #expect(chunked.events == whole.events, "chunks of \(size) bytes")
            #expect(chunked.problems.isEmpty)
        }
    }

    @Test func startTagsCarryTheirLine() {
        let recorder = record(Self.document)
        #expect(recorder.startedElements.map(\.line) == [2, 3, 4, 5, 6, 7, 8])
    }

    @Test func textBufferStopsAtItsLimit() {
        var buffer = XMLTextBuffer(limit: 10)
        buffer.append("hello ")
        #expect(!buffer.isOverLimit)
        buffer.append("world!")
        #expect(buffer.isOverLimit)
        #expect(buffer.text == "hello worl")
        #expect(buffer.byteCount == 10)
        buffer.append("more")
        #expect(buffer.byteCount == 10)
        buffer.removeAll()
        #expect(!buffer.isOverLimit && buffer.byteCount == 0)
    }

    /// A handler that keeps text in a capped buffer, as a feed reader does.
    final class Capper: XMLStreamHandler {
        var buffer = XMLTextBuffer(limit: 1 << 20)
        var largestPiece = 0
        var problems: [XMLStreamError] = []
        var sawAfter = false
        func startElement(_ element: XMLStartElement) { sawAfter = sawAfter || element.name.localName == "u" }
        func endElement(_ name: XMLName, line: Int) {}
        func text(_ utf8: UnsafeRawBufferPointer) {
            largestPiece = max(largestPiece, utf8.count)
            buffer.append(utf8)
        }
        func problem(_ error: XMLStreamError) { problems.append(error) }
    }

    static func capped(_ parts: [String], fill: UInt8, megabytes: Int) -> Capper {
        let capper = Capper()
        let parser = XMLStreamParser(handler: capper)
        parts[0].utf8CString.dropLast().withUnsafeBytes { parser.feed($0) }
        let chunk = [UInt8](repeating: fill, count: 64 << 10)
        for _ in 0..<(megabytes * 16) { chunk.withUnsafeBytes { parser.feed($0) } }
        parts[1].utf8CString.dropLast().withUnsafeBytes { parser.feed($0) }
        parser.finish()
        return capper
    }

    @Test func hugeTextArrivesAsItIsReadAndTheCallerCapsIt() {
        let capper = Self.capped(["<r><t>", "</t><u>after</u></r>"], fill: UInt8(ascii: "x"), megabytes: 15)
        #expect(capper.problems.isEmpty)
        #expect(capper.buffer.isOverLimit && capper.buffer.byteCount == 1 << 20)
        #expect(capper.largestPiece <= 64 << 10, "character data is handed over chunk by chunk")
        #expect(capper.sawAfter)
    }

    @Test func cdataIsHeldByLibxml2UpToItsTenMegabyteLookAhead() {
        // libxml2 2.9.14 keeps a CDATA section in its buffer until it sees a
        // '>' (real HTML has plenty); 5 MB of 'x' come whole, at the end.
        let small = Self.capped(["<r><t><![CDATA[", "]]></t><u>after</u></r>"], fill: UInt8(ascii: "x"), megabytes: 5)
        #expect(small.problems.isEmpty && small.sawAfter)
        #expect(small.buffer.isOverLimit && small.buffer.byteCount == 1 << 20)
        // Past 10 MB with no '>' it gives up ("Huge input lookup"): memory
        // stays bounded, the rest of the document is lost.
        let huge = Self.capped(["<r><t><![CDATA[", "]]></t><u>after</u></r>"], fill: UInt8(ascii: "x"), megabytes: 15)
        #expect(!huge.sawAfter)
        #expect(huge.problems.contains { $0.message.contains("Huge input lookup") })
        #expect(huge.problems.last?.severity == .fatal)
    }

    @Test func handlerCanStopTheParser() {
        let recorder = record(Self.document, stopAfterElements: 3)
        #expect(recorder.startedElements.count == 3)
        #expect(recorder.problems.isEmpty, "stopping is not a problem")
    }

    @Test func htmlNamedEntitiesInTextAndAttributes() {
        let recorder = record(#"<r a="d&eacute;j&agrave; &amp;eacute; &nbsp;|&#38;|&foo"><t>&eacute;t&eacute;&nbsp;&hellip;&euro;</t></r>"#)
        #expect(recorder.startedElements.first?.attribute("a") == "d\u{E9}j\u{E0} &eacute; \u{A0}|&|", "a bad reference in an attribute is dropped")
        #expect(recorder.errors.count == 1)
        #expect(recorder.texts == ["\u{E9}t\u{E9}\u{A0}\u{2026}\u{20AC}"])
    }

    @Test func unknownEntityIsReportedAndDropped() {
        let recorder = record("<r>\n<t>a &bogus; b</t></r>")
        #expect(recorder.texts == ["a  b"])
        #expect(recorder.errors.first?.line == 2)
        #expect(recorder.errors.first?.message.contains("bogus") == true)
    }

    @Test func undeclaredPrefixIsANamespaceError() {
        let recorder = record(#"<rss><item><media:content url="x.jpg"/></item></rss>"#)
        let element = recorder.startedElements[2]
        #expect(element.name == XMLName(localName: "content", namespaceURI: nil, prefix: "media"))
        #expect(element.attribute("url") == "x.jpg")
        #expect(recorder.problems.contains { $0.isNamespaceError })
    }
}
