import ImageFormats

/// What libvips will hold in memory to make a thumbnail, estimated from the
/// source's header before any pixel is decoded, so the decode budget
/// (``DecodeBudget``) can bound it.
///
/// Two parts. Decoders that hold the whole picture hold it at full size,
/// whatever size the thumbnail is: libpng an interlaced (Adam7) PNG's pixels,
/// libjpeg a progressive JPEG's coefficients (3 bytes a pixel in 4:2:0),
/// libnsgif a GIF's RGBA frame and libvips its copy, libwebp a lossless
/// WebP's ARGB pixels or an animation's canvas. Everything else is decoded a
/// strip at a time (JPEG and WebP shrunk while they load), which costs what
/// libvips' strips and caches take: measured with libvips 8.14 on this
/// machine (peak RSS of one thumbnail, bench notes in docs/benchmarks-history.md), about
/// 4 KiB for each column of the decoded rows and 3 MiB besides (an 8000 × 6000
/// 16-bit PNG: 33 MB; a 1600 × 1200 baseline JPEG, shrunk by 2 on load:
/// under 4 MB). The constants here are those figures rounded up.
enum DecodeCost {
    /// What any job holds besides its rows: libvips' operations, the encoder, the result.
    static let perJob = 4 << 20
    /// What each column of the rows decoded holds in libvips' strips and line caches.
    static let perColumn = 5 << 10
    /// What the AVIF encoder (libaom) takes besides, and per pixel of output (about 8 MB at 320 × 240).
    static let avifEncoder = 4 << 20
    static let avifPerPixel = 96
    /// What the other encoders take per pixel of output.
    static let encoderPerPixel = 32

    /// The bytes making a `width` × `height` thumbnail in `format` of a source with `facts` holds at its peak.
    static func bytes(of facts: SourceFacts, width: Int, height: Int, format: ImageFormat) -> Int {
        let columns =
            (facts.storedWidth + shrinkOnLoad(facts, width: width, height: height) - 1)
            / shrinkOnLoad(facts, width: width, height: height)
        let encoder = format == .avif ? avifEncoder + width * height * avifPerPixel : width * height * encoderPerPixel
        return wholeImage(facts) + perJob + columns * perColumn + encoder
    }

    /// What a decoder that holds the whole picture holds (0 for one that streams).
    static func wholeImage(_ facts: SourceFacts) -> Int {
        switch facts.info.format {
        case "png" where facts.interlaced:
            return facts.pixels * facts.bands * facts.sampleBytes
        case "jpeg":
            if let frame = facts.jpegFrame {
                return frame.progressive ? frame.coefficientBytes : 0
            }
            // A frame libvips reads but this parser does not: every component at full size.
            return facts.interlaced ? facts.pixels * max(1, facts.bands) * 2 : 0
        case "gif":
            // libnsgif's RGBA frame and libvips' copy of it.
            return facts.pixels * 8
        case "webp":
            switch facts.webp ?? .lossless {
            case .lossy: return 0
            case .lossless: return facts.pixels * 4
            case .animated: return facts.pixels * 8
            }
        default:
            return 0
        }
    }

    /// The factor libvips shrinks the source by while loading it, for a
    /// thumbnail covering `width` × `height`: JPEG and lossy WebP only, and
    /// (as `vips_thumbnail` does, to keep the final resize sharp) to no less
    /// than twice the size asked for: 8 from 16 times the size, 4 from 8, 2 from 4.
    static func shrinkOnLoad(_ facts: SourceFacts, width: Int, height: Int) -> Int {
        guard facts.info.format == "jpeg" || (facts.info.format == "webp" && facts.webp == .lossy) else { return 1 }
        let factor = min(Double(facts.info.width) / Double(max(1, width)), Double(facts.info.height) / Double(max(1, height)))
        switch factor {
        case 16...: return 8
        case 8...: return 4
        case 4...: return 2
        default: return 1
        }
    }

    /// The bytes painting a generated original of `width` pixels a row holds: strips only.
    static func painting(width: Int) -> Int {
        perJob + width * perColumn
    }
}
