import Testing

@testable import Thumbnailer

@Suite("WebP metadata stripping")
struct WebPMetadataTests {
    /// A RIFF WebP file made of `chunks`.
    func webp(_ chunks: [(String, [UInt8])]) -> [UInt8] {
        var body = Array("WEBP".utf8)
        for (type, data) in chunks {
            body += Array(type.utf8) + littleEndian(data.count) + data
            if data.count % 2 == 1 { body.append(0) }
        }
        return Array("RIFF".utf8) + littleEndian(body.count) + body
    }

    func littleEndian(_ value: Int) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    let extendedHeader: [UInt8] = [0x08 | 0x20, 0, 0, 0, 9, 0, 0, 9, 0, 0]  // EXIF + ICC flags, 10 × 10

    @Test("EXIF, XMP and ICC chunks go, and a lone image chunk loses the extended header")
    func simpleLayout() throws {
        let source = webp([
            ("VP8X", extendedHeader), ("ICCP", [1, 2, 3]), ("VP8 ", [9, 9, 9, 9]), ("EXIF", [5, 5, 5, 5, 5]),
            ("XMP ", [7]),
        ])
        let stripped = try #require(WebPMetadata.stripped(source))
        #expect(stripped == webp([("VP8 ", [9, 9, 9, 9])]))
    }

    @Test("An extended header still needed (alpha) is kept, with the metadata flags cleared")
    func keepsAlpha() throws {
        var header = extendedHeader
        header[0] |= 0x10  // alpha
        let source = webp([("VP8X", header), ("ALPH", [1, 1]), ("VP8 ", [9, 9]), ("EXIF", [5])])
        var expectedHeader = header
        expectedHeader[0] = 0x10
        #expect(WebPMetadata.stripped(source) == webp([("VP8X", expectedHeader), ("ALPH", [1, 1]), ("VP8 ", [9, 9])]))
    }

    @Test("Malformed containers are refused")
    func malformed() {
        #expect(WebPMetadata.stripped([]) == nil)
        #expect(WebPMetadata.stripped(Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBX".utf8)) == nil)
        var cut = webp([("VP8 ", [9, 9, 9, 9])])
        cut.removeLast()
        #expect(WebPMetadata.stripped(cut) == nil)
    }
}
