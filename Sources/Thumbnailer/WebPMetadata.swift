/// Removes metadata chunks from a WebP file.
///
/// libvips 8.14.1's WebP writer ignores `strip` and always adds an EXIF chunk
/// (rebuilt from the image's resolution and orientation, plus whatever EXIF
/// the source had), so a WebP thumbnail would carry the camera's EXIF, GPS
/// position included. The container is simple enough to filter here.
enum WebPMetadata {
    /// Chunks that hold metadata rather than pixels.
    static let metadataChunks: Set<String> = ["EXIF", "XMP ", "ICCP"]

    /// `webp` without EXIF, XMP and ICC chunks, in the simple (VP8/VP8L only)
    /// layout when nothing else needs the extended one; nil when `webp` is not
    /// a well-formed WebP file.
    static func stripped(_ webp: [UInt8]) -> [UInt8]? {
        guard webp.count >= 12, fourCC(webp, 0) == "RIFF", fourCC(webp, 8) == "WEBP" else { return nil }
        var chunks: [(type: String, data: ArraySlice<UInt8>)] = []
        var offset = 12
        while offset < webp.count {
            guard offset + 8 <= webp.count else { return nil }
            let size = Int(littleEndian(webp, offset + 4))
            guard offset + 8 + size <= webp.count else { return nil }
            chunks.append((fourCC(webp, offset), webp[(offset + 8)..<(offset + 8 + size)]))
            offset += 8 + size + (size & 1)
        }
        chunks.removeAll { metadataChunks.contains($0.type) }
        if let index = chunks.firstIndex(where: { $0.type == "VP8X" }), chunks[index].data.count >= 1 {
            var header = Array(chunks[index].data)
            header[0] &= ~(0x20 | 0x08 | 0x04)  // ICC, EXIF and XMP flags
            if header[0] == 0, chunks.count == 2 {
                chunks.remove(at: index)  // a lone VP8 or VP8L chunk needs no extended header
            } else {
                chunks[index].data = header[...]
            }
        }
        var body: [UInt8] = Array("WEBP".utf8)
        for chunk in chunks {
            body += Array(chunk.type.utf8) + littleEndianBytes(UInt32(chunk.data.count)) + chunk.data
            if chunk.data.count & 1 == 1 { body.append(0) }
        }
        return Array("RIFF".utf8) + littleEndianBytes(UInt32(body.count)) + body
    }

    private static func fourCC(_ bytes: [UInt8], _ offset: Int) -> String {
        String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self)
    }

    private static func littleEndian(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }

    private static func littleEndianBytes(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }
}
