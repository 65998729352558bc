/// The size an encoded image declares, read from its header without decoding
/// a pixel: enough to tell whether bytes that claim to be a thumbnail in a
/// format are one (a cluster's peers and Redis are believed no further).
///
/// Plain Swift over the bytes, bounds-checked at every step, so hostile input
/// reaches no C decoder here. Each reader is strict about what a whole file
/// of its format looks like, so a torn value fails too: WebP's RIFF size must
/// be the byte count, a JPEG must end with its end-of-image marker, an AVIF's
/// boxes must fill the bytes exactly.
public struct ImageHeader: Sendable, Equatable {
    /// The width in pixels (for an AVIF, the largest of its images').
    public var width: Int
    /// The height in pixels (for an AVIF, the largest of its images').
    public var height: Int

    /// A size.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// The header of `bytes` read as `format`; nil when they are not a whole
    /// image of that format: other magic bytes, a header that does not parse,
    /// a zero size, or bytes cut short.
    public static func read(_ bytes: [UInt8], as format: ImageFormat) -> ImageHeader? {
        let header: ImageHeader? =
            switch format {
            case .webp: webp(Bytes(bytes))
            case .jpeg: jpeg(Bytes(bytes))
            case .avif: avif(Bytes(bytes))
            }
        guard let header, header.width > 0, header.height > 0 else { return nil }
        return header
    }

    // MARK: WebP

    /// RIFF, then one VP8 (lossy), VP8L (lossless) or VP8X (extended) chunk first.
    private static func webp(_ b: Bytes) -> ImageHeader? {
        guard b.count >= 20, b.matches("RIFF", at: 0), b.matches("WEBP", at: 8), let riff = b.le32(4), 8 + riff == b.count else { return nil }
        guard let size = b.le32(16), 20 + size <= b.count else { return nil }
        if b.matches("VP8 ", at: 12) {
            // A 3-byte frame tag (bit 0 clear: a key frame), the start code, then 14-bit sizes.
            guard size >= 10, let tag = b[20], tag & 1 == 0, b[23] == 0x9D, b[24] == 0x01, b[25] == 0x2A,
                let width = b.le16(26), let height = b.le16(28)
            else { return nil }
            return ImageHeader(width: width & 0x3FFF, height: height & 0x3FFF)
        }
        if b.matches("VP8L", at: 12) {
            // The signature byte, then width - 1 and height - 1 in 14 bits each.
            guard size >= 5, b[20] == 0x2F, let b1 = b[21], let b2 = b[22], let b3 = b[23], let b4 = b[24] else { return nil }
            let width = 1 + (Int(b1) | Int(b2 & 0x3F) << 8)
            let height = 1 + (Int(b2 >> 6) | Int(b3) << 2 | Int(b4 & 0x0F) << 10)
            return ImageHeader(width: width, height: height)
        }
        if b.matches("VP8X", at: 12) {
            // Flags and reserved (4 bytes), then the canvas's width - 1 and height - 1 in 24 bits each.
            guard size >= 10, let width = b.le24(24), let height = b.le24(27) else { return nil }
            return ImageHeader(width: width + 1, height: height + 1)
        }
        return nil
    }

    // MARK: JPEG

    /// SOI, segments up to the first start-of-frame (which holds the size), and EOI at the end.
    private static func jpeg(_ b: Bytes) -> ImageHeader? {
        guard b[0] == 0xFF, b[1] == 0xD8 else { return nil }
        // Some encoders pad after the end-of-image marker.
        var end = b.count
        while end > 0, b[end - 1] == 0 { end -= 1 }
        guard end >= 4, b[end - 2] == 0xFF, b[end - 1] == 0xD9 else { return nil }
        var offset = 2
        while offset < end {
            guard b[offset] == 0xFF else { return nil }
            // Fill bytes: any number of 0xFF before a marker.
            while b[offset] == 0xFF { offset += 1 }
            guard let marker = b[offset] else { return nil }
            offset += 1
            switch marker {
            case 0x01, 0xD0...0xD7:
                continue  // markers without a length
            case 0xD8, 0xD9, 0xDA:
                return nil  // another image, the end, or scan data before any frame header
            default:
                break
            }
            guard let length = b.be16(offset), length >= 2, offset + length <= end else { return nil }
            // SOF0–SOF15 but DHT (C4), JPG (C8) and DAC (CC): precision, height, width, components.
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                guard length >= 8, let height = b.be16(offset + 3), let width = b.be16(offset + 5), let components = b[offset + 7],
                    (1...4).contains(components)
                else { return nil }
                return ImageHeader(width: width, height: height)
            }
            offset += length
        }
        return nil
    }

    // MARK: AVIF

    /// ISO boxes filling the bytes exactly: `ftyp` naming AVIF first, an
    /// `mdat`, and a `meta` whose item properties (`iprp`/`ipco`) hold at
    /// least one image spatial extent (`ispe`).
    private static func avif(_ b: Bytes) -> ImageHeader? {
        guard let top = boxes(b, from: 0, to: b.count), let ftyp = top.first, ftyp.type == "ftyp" else { return nil }
        // The major brand, then the minor version, then compatible brands.
        var brands = [ftyp.start]
        var brand = ftyp.start + 8
        while brand + 4 <= ftyp.end {
            brands.append(brand)
            brand += 4
        }
        guard brands.contains(where: { b.matches("avif", at: $0) || b.matches("avis", at: $0) }) else { return nil }
        guard top.contains(where: { $0.type == "mdat" }), let meta = top.first(where: { $0.type == "meta" }) else { return nil }
        // `meta` is a full box: 4 bytes of version and flags before its children.
        guard let inMeta = boxes(b, from: meta.start + 4, to: meta.end), let iprp = inMeta.first(where: { $0.type == "iprp" }),
            let inIprp = boxes(b, from: iprp.start, to: iprp.end), let ipco = inIprp.first(where: { $0.type == "ipco" }),
            let properties = boxes(b, from: ipco.start, to: ipco.end)
        else { return nil }
        var largest: ImageHeader?
        for ispe in properties where ispe.type == "ispe" {
            // Full box (4 bytes), then the width and height in 32 bits each.
            guard ispe.end - ispe.start >= 12, let width = b.be32(ispe.start + 4), let height = b.be32(ispe.start + 8) else { return nil }
            largest = ImageHeader(width: max(width, largest?.width ?? 0), height: max(height, largest?.height ?? 0))
        }
        return largest
    }

    private struct Box {
        var type: String
        /// Where the box's content starts (after its header) and ends.
        var start: Int
        var end: Int
    }

    /// The boxes that fill `from..<to` exactly; nil when one runs past it or
    /// the last stops short (a torn file), or when there are implausibly many.
    private static func boxes(_ b: Bytes, from: Int, to: Int) -> [Box]? {
        var found: [Box] = []
        var offset = from
        while offset < to {
            guard found.count < 64, let size32 = b.be32(offset), offset + 8 <= to else { return nil }
            let type = String(decoding: b.slice(offset + 4, 4), as: UTF8.self)
            var header = 8
            var size = size32
            if size32 == 1 {
                // A 64-bit size follows the type.
                guard let high = b.be32(offset + 8), let low = b.be32(offset + 12), high == 0 else { return nil }
                header = 16
                size = low
            } else if size32 == 0 {
                size = to - offset  // to the end
            }
            guard size >= header, offset + size <= to else { return nil }
            found.append(Box(type: type, start: offset + header, end: offset + size))
            offset += size
        }
        return offset == to ? found : nil
    }
}

/// Bounds-checked reads: an index past the end reads nil, never traps.
private struct Bytes {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var count: Int { bytes.count }

    subscript(_ index: Int) -> UInt8? {
        index >= 0 && index < bytes.count ? bytes[index] : nil
    }

    func slice(_ offset: Int, _ length: Int) -> ArraySlice<UInt8> {
        guard offset >= 0, length >= 0, offset + length <= bytes.count else { return [] }
        return bytes[offset..<(offset + length)]
    }

    func matches(_ text: StaticString, at offset: Int) -> Bool {
        let expected = UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
        return slice(offset, expected.count).elementsEqual(expected) && expected.count > 0
    }

    func le16(_ offset: Int) -> Int? {
        guard let a = self[offset], let b = self[offset + 1] else { return nil }
        return Int(a) | Int(b) << 8
    }

    func le24(_ offset: Int) -> Int? {
        guard let low = le16(offset), let high = self[offset + 2] else { return nil }
        return low | Int(high) << 16
    }

    func le32(_ offset: Int) -> Int? {
        guard let low = le16(offset), let high = le16(offset + 2) else { return nil }
        return low | high << 16
    }

    func be16(_ offset: Int) -> Int? {
        guard let a = self[offset], let b = self[offset + 1] else { return nil }
        return Int(a) << 8 | Int(b)
    }

    func be32(_ offset: Int) -> Int? {
        guard let high = be16(offset), let low = be16(offset + 2) else { return nil }
        return high << 16 | low
    }
}
