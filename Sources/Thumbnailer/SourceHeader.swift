/// Reads an encoded source's header, without decoding pixels, and decides
/// whether it is an image the thumbnailer accepts at all.
enum SourceHeader {
    /// The libvips loaders accepted, by the format name they load.
    ///
    /// Everything else is refused, even where libvips could load it: SVG
    /// (HTML with an inline `<svg>` would pass as one), PDF and ImageMagick
    /// have large attack surfaces, and a feed's images are these four.
    static let acceptedLoaders: [String: String] = [
        "VipsForeignLoadJpegBuffer": "jpeg",
        "VipsForeignLoadPngBuffer": "png",
        "VipsForeignLoadWebpBuffer": "webp",
        "VipsForeignLoadNsgifBuffer": "gif",
    ]

    /// The header facts of `bytes`, or `.notAnImage`.
    static func read(_ bytes: UnsafeRawBufferPointer) -> Result<ImageInfo, ThumbnailError> {
        facts(of: bytes).map(\.info)
    }

    /// What the header of `bytes` says, with what its decode will cost
    /// (``SourceFacts``), or `.notAnImage`. Decodes no pixels: a GIF's
    /// frames are scanned, not decoded.
    static func facts(of bytes: UnsafeRawBufferPointer) -> Result<SourceFacts, ThumbnailError> {
        guard LibVips.started else { return .failure(.failed("libvips did not start")) }
        guard let loader = LibVips.loaderName(of: bytes), let format = acceptedLoaders[loader] else {
            return .failure(.notAnImage)
        }
        let facts: SourceFacts? = LibVips.withHeader(of: bytes) { image in
            let upright = image.uprightSize
            let info = ImageInfo(width: upright.width, height: upright.height, format: format, orientation: image.orientation)
            return SourceFacts(
                info: info, bands: image.bands, sampleBytes: image.sampleBytes,
                interlaced: (image.intField("interlaced") ?? 0) != 0,
                jpegFrame: format == "jpeg" ? JPEGFrame.read(bytes) : nil,
                webp: format == "webp" ? SourceFacts.webpCoding(of: bytes) : nil)
        }
        guard let facts, facts.info.width > 0, facts.info.height > 0 else {
            _ = LibVips.takeError()
            return .failure(.notAnImage)
        }
        return .success(facts)
    }

    /// Whether `bytes` of `format` stop before the format's end marker: the
    /// sign of a cut download, as opposed to damage inside the data.
    static func isCut(_ bytes: UnsafeRawBufferPointer, format: String) -> Bool {
        var end = bytes.count
        switch format {
        case "jpeg":
            // Some encoders pad after the end-of-image marker (FF D9).
            while end > 0, bytes[end - 1] == 0 { end -= 1 }
            return end < 2 || bytes[end - 2] != 0xFF || bytes[end - 1] != 0xD9
        case "png":
            // The last chunk is IEND: length 0, type, CRC (12 bytes).
            guard end >= 12 else { return true }
            return !(bytes[end - 8] == 0x49 && bytes[end - 7] == 0x45 && bytes[end - 6] == 0x4E && bytes[end - 5] == 0x44)
        case "webp":
            // RIFF header: the little-endian size at offset 4 counts what follows offset 8.
            guard end >= 12 else { return true }
            let size = Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24
            return 8 + size > end
        case "gif":
            return bytes.last != 0x3B
        default:
            return false
        }
    }
}
