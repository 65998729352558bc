import Testing
import XMLStream

/// What libxml2 2.9.14 does with malformed documents, with recovery on
/// (the parser's setting): these tests pin down its behaviour.
@Suite struct RecoveryTests {
    @Test func bareAmpersandIsReportedAndTheRestArrivesWhole() {
        let recorder = record("<r>\n<t>AT & T</t>\n<t>caf&eacute; &amp; cr&egrave;me &lt;3</t>\n</r>")
        #expect(recorder.texts == ["AT  T", "caf\u{E9} & cr\u{E8}me <3"])
        #expect(recorder.errors.count == 1)
        #expect(recorder.errors.first?.line == 2)
        #expect(recorder.errors.first?.message == "an '&' that starts no entity (write &amp;)")
    }

    @Test func mismatchedEndTagShiftsTheNestingButGoesOn() {
        let recorder = record("<r>\n<a><b>x</a>\n<c>y</c>\n</r>")
        #expect(recorder.errors.first?.line == 2)
        #expect(recorder.errors.first?.message == "</a> closes <b>, opened at line 2")
        // </a> closed <b>, so <c> sits inside <a>, and </r> closes <a>.
        #expect(recorder.events.contains(.start(XMLStartElement(name: XMLName(localName: "c"), line: 3))))
        #expect(recorder.texts == ["x", "y"])
        #expect(recorder.errors.last?.message.contains("cut short") == true, "<r> is never closed")
    }

    @Test func lessThanInTextStopsEverything() {
        let recorder = record("<r>\n<t>a < b</t>\n<t>after</t>\n</r>")
        #expect(recorder.texts == ["a "])
        #expect(recorder.errors.first?.message == "a '<' that starts no tag (write &lt;)")
        #expect(recorder.errors.first?.line == 2)
        #expect(recorder.errors.last?.severity == .fatal)
    }

    @Test func truncatedDocumentReportsWhereItEnds() {
        let recorder = record("<r>\n<t>one</t>\n<t>tw")
        #expect(recorder.texts == ["one", "tw"])
        let last = recorder.errors.last
        #expect(last?.line == 3)
        #expect(last?.severity == .fatal)
        #expect(last?.message == "the document ends inside <t>: it is cut short")
    }

    @Test func emptyAndNonXMLInputAreReported() {
        let empty = record("")
        #expect(empty.errors.first?.message == "the document is empty: no XML element")
        let prose = record("hello, this is not XML")
        #expect(prose.startedElements.isEmpty)
        #expect(prose.errors.first?.message == "no XML element found (this is not XML)")
        #expect(prose.errors.first?.line == 1)
    }

    @Test func contentAfterTheRootStopsTheParser() {
        let recorder = record("<r>a</r>\n<r>b</r>")
        #expect(recorder.texts == ["a"])
        #expect(recorder.errors.first?.line == 2)
        #expect(recorder.errors.first?.message == "more content after the end of the root element")
    }

    @Test func unquotedAndRepeatedAttributesAreRecovered() {
        let recorder = record("<r>\n<t x=1>a</t>\n<t y=\"1\" y=\"2\">b</t>\n<t>c &amp; d</t>\n</r>")
        #expect(recorder.texts.last == "c & d")
        #expect(recorder.errors.map(\.line).contains(2))
        #expect(recorder.errors.map(\.line).contains(3))
    }

    @Test func leadingBlankBeforeTheDeclarationIsRecovered() {
        let recorder = record("\n  <?xml version=\"1.0\"?>\n<r>ok</r>")
        #expect(recorder.texts == ["ok"])
        #expect(recorder.errors.count == 1)
    }
}
