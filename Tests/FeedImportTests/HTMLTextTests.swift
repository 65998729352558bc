import Testing

@testable import FeedImport

@Suite struct HTMLTextTests {
    @Test func tagsGoEntitiesDecodeSpacesCollapse() {
        #expect(HTMLText.plainText("<p>Hello&nbsp;<b>wor</b>ld</p>\n\n<p>Second &amp; last&#33; &#x263A;</p>") == "Hello world Second & last! ☺")
        #expect(HTMLText.plainText("  plain   text  ") == "plain text")
        #expect(HTMLText.plainText("a < b and c > d") == "a < b and c > d")
        #expect(HTMLText.plainText("fish &chips; &unknown; &") == "fish &chips; &unknown; &")
        #expect(HTMLText.plainText("caf&eacute; &#0; &#xD800;") == "café \u{FFFD} \u{FFFD}")
    }

    @Test func scriptsStylesAndCommentsVanishWithTheirContent() {
        let hostile = #"Hi<script>alert("x")</script><style>p{}</style><!-- <b>secret</b> --><img src=x onerror=alert(1)> there"#
        #expect(HTMLText.plainText(hostile) == "Hi there")
        #expect(HTMLText.plainText("a<script>never closed") == "a")
    }

    @Test func escapedMarkupStaysText() {
        // &lt;script&gt; decodes to the characters "<script>", which the page then escapes again.
        #expect(HTMLText.plainText("&lt;script&gt;alert(1)&lt;/script&gt;") == "<script>alert(1)</script>")
    }

    @Test func firstImageSkipsPixelsAndReadsSizes() throws {
        let html = #"<p><img src="/t.gif" width="1" height="1"><IMG SRC='photo.jpg' WIDTH=640 height="480" alt=x></p><img src="second.jpg">"#
        let image = try #require(HTMLText.firstImage(html))
        #expect(image.src == "photo.jpg")
        #expect(image.width == 640)
        #expect(image.height == 480)
        #expect(HTMLText.firstImage("<p>no images</p>") == nil)
        #expect(HTMLText.firstImage("<img src=unquoted.png>")?.src == "unquoted.png")
        #expect(HTMLText.firstImage("<img src=\"a.jpg?x=1&amp;y=2\">")?.src == "a.jpg?x=1&y=2")
    }

    @Test func aMegabyteOfMarkupIsLinear() {
        let big = String(repeating: "<p>word &amp; word</p>", count: 50_000)
        #expect(HTMLText.plainText(big).count == 50_000 * 12 - 1)
    }
}
