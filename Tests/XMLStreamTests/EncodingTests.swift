import Testing
import XMLStream

/// Bytes in, UTF-8 text out, whatever the document declared (or got wrong).
@Suite struct EncodingTests {
    static func latin1(_ text: String) -> [UInt8] {
        text.unicodeScalars.map { UInt8($0.value) }
    }

    @Test func iso88591DeclaredIsDecoded() {
        let bytes = Self.latin1("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><r a=\"\u{E9}\">caf\u{E9} cr\u{E8}me</r>")
        for size in [1, 1 << 16] {
            let recorder = record(bytes, chunkSize: size)
            #expect(recorder.texts == ["caf\u{E9} cr\u{E8}me"])
            #expect(recorder.startedElements.first?.attribute("a") == "\u{E9}")
            #expect(recorder.problems.isEmpty)
        }
    }

    @Test func windows1252DeclaredAndISO88591LabelBothReadCurlyQuotes() {
        for label in ["windows-1252", "iso-8859-1"] {
            let bytes = Array("<?xml version='1.0' encoding='\(label)'?><r>".utf8) + [0x93, 0x68, 0x69, 0x94, 0x20, 0x80, 0x20, 0x81] + Array("</r>".utf8)
            let recorder = record(bytes)
            #expect(recorder.texts == ["\u{201C}hi\u{201D} \u{20AC} \u{81}"], "\(label)")
            #expect(recorder.problems.isEmpty)
        }
    }

    @Test func utf16WithByteOrderMarkIsDecoded() {
        let text = "<?xml version=\"1.0\" encoding=\"UTF-16\"?><r a=\"\u{E9}\">caf\u{E9} \u{1F600}</r>"
        let units = Array(text.utf16)
        let littleEndian: [UInt8] = [0xFF, 0xFE] + units.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let bigEndian: [UInt8] = [0xFE, 0xFF] + units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        for bytes in [littleEndian, bigEndian] {
            for size in [1, 3, 1 << 16] {
                let recorder = record(bytes, chunkSize: size)
                #expect(recorder.texts == ["caf\u{E9} \u{1F600}"])
                #expect(recorder.startedElements.first?.attribute("a") == "\u{E9}")
                #expect(recorder.problems.isEmpty)
            }
        }
    }

    @Test func noDeclarationMeansUTF8() {
        let recorder = record("<r>caf\u{E9} \u{1F600} \u{4E2D}</r>", chunkSize: 1)
        #expect(recorder.texts == ["caf\u{E9} \u{1F600} \u{4E2D}"])
        #expect(recorder.problems.isEmpty)
    }

    @Test func utf8ByteOrderMarkIsAccepted() {
        let recorder = record([0xEF, 0xBB, 0xBF] + Array("<?xml version=\"1.0\"?><r>\u{E9}</r>".utf8), chunkSize: 1)
        #expect(recorder.texts == ["\u{E9}"])
        #expect(recorder.problems.isEmpty)
    }

    @Test func latin1BytesInADeclaredUTF8DocumentAreReadAsWindows1252() {
        // A feed that says UTF-8, holds mostly UTF-8, and has Latin-1 and
        // windows-1252 bytes on line 3 (a common copy-paste accident).
        let bytes = Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<r>\n<t>caf".utf8) + [0xE9, 0x20, 0x93, 0x71, 0x94]
            + Array(" cr\u{E8}me</t>\n<u>after \u{263A}</u></r>".utf8)
        for size in [1, 2, 1 << 16] {
            let recorder = record(bytes, chunkSize: size)
            #expect(recorder.texts == ["caf\u{E9} \u{201C}q\u{201D} cr\u{E8}me", "after \u{263A}"])
            #expect(recorder.errors.isEmpty)
            #expect(recorder.problems.count == 1)
            #expect(recorder.problems.first?.severity == .repaired)
            #expect(recorder.problems.first?.line == 3)
        }
    }

    @Test func truncatedUTF8SequenceAtTheEndIsRepaired() {
        let recorder = record(Array("<r>ab".utf8) + [0xE2, 0x98])
        #expect(recorder.problems.contains { $0.severity == .repaired })
        #expect(recorder.texts == ["ab\u{E2}\u{2DC}"])
    }

    @Test func forbiddenControlCharactersAreReplaced() {
        let recorder = record(Array("<r>\n\na".utf8) + [0x01, 0x0B] + Array("b\u{FFFF}</r>".utf8))
        #expect(recorder.texts == ["\n\na\u{FFFD}\u{FFFD}b\u{FFFD}"])
        #expect(recorder.errors.isEmpty)
        #expect(recorder.problems.map(\.line) == [3])
    }

    @Test func usASCIIDeclaredWithUTF8BytesIsReadAsUTF8() {
        let recorder = record("<?xml version=\"1.0\" encoding=\"US-ASCII\"?><r>\u{E9}</r>")
        #expect(recorder.texts == ["\u{E9}"])
        #expect(recorder.problems.isEmpty)
    }

    @Test func otherDeclaredEncodingsAreLeftToLibxml2() {
        // KOI8-R: 0xC1 0xC2 are "аб".
        let bytes = Array("<?xml version=\"1.0\" encoding=\"KOI8-R\"?><r>".utf8) + [0xC1, 0xC2] + Array("</r>".utf8)
        let recorder = record(bytes)
        #expect(recorder.texts == ["\u{430}\u{431}"])
    }

    @Test func unknownDeclaredEncodingIsReported() {
        let recorder = record("<?xml version=\"1.0\" encoding=\"x-no-such-thing\"?><r>text</r>")
        #expect(!recorder.problems.isEmpty)
        #expect(recorder.problems.contains { $0.message.lowercased().contains("encoding") })
    }
}

extension EncodingTests {
    @Test func bytesTheDeclaredEncodingCannotDecodeStopTheParser() {
        // EUC-JP has no sequence 0xFF 0xFF; libxml2's converter fails and it
        // stops (it prints nothing: its generic error channel is silenced).
        let bytes = Array("<?xml version=\"1.0\" encoding=\"EUC-JP\"?>\n<r>\n<t>ok</t>\n<t>".utf8) + [0xFF, 0xFF]
            + Array("</t>\n<t>after</t></r>".utf8)
        let recorder = record(bytes)
        #expect(recorder.texts.first == "ok")
        #expect(!recorder.texts.contains("after"))
        #expect(
            recorder.errors.map(\.description) == [
                "line 4: text the declared encoding cannot decode (bytes 0xFF 0xFF 0x3C 0x2F): nothing after this is read"
            ])
        #expect(recorder.errors.last?.severity == .fatal)
    }
}
