/// What a source's header says about the cost of decoding it: its size,
/// bands and sample size, and whether its decoder must hold the whole image
/// (an interlaced PNG, a progressive JPEG, a GIF, a lossless or animated WebP).
struct SourceFacts: Sendable, Equatable {
    /// The size as displayed, the format and the orientation.
    var info: ImageInfo
    /// Bands of a decoded pixel (3 for RGB, 4 with alpha; a GIF's are RGBA).
    var bands: Int
    /// Bytes of one band: 1, or 2 for a 16-bit PNG.
    var sampleBytes: Int
    /// Whether the header says interlaced (a PNG's Adam7, a progressive JPEG).
    var interlaced: Bool
    /// A JPEG's frame header, with its components' sampling.
    var jpegFrame: JPEGFrame?
    /// How a WebP is coded, which decides how much of it libwebp holds.
    var webp: WebPCoding?

    /// How a WebP picture is coded.
    enum WebPCoding: Sendable, Equatable {
        /// VP8: decoded a few rows at a time, scaled as it goes.
        case lossy
        /// VP8L: every pixel (4 bytes) is kept, for the back references.
        case lossless
        /// Frames drawn onto a canvas of the whole picture.
        case animated
    }

    /// Pixels as stored (width × height is the same whichever way the image is turned).
    var pixels: Int { info.width * info.height }

    /// The width of the stored rows, which libvips decodes one after the
    /// other: the height as displayed when the orientation turns the image.
    var storedWidth: Int { info.orientation >= 5 ? info.height : info.width }

    /// How the WebP file `bytes` is coded: its first picture chunk, or the
    /// extended header's animation flag.
    static func webpCoding(of bytes: UnsafeRawBufferPointer) -> WebPCoding {
        var offset = 12
        while offset + 8 <= bytes.count {
            let type = String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self)
            let size = (0..<4).reduce(0) { $0 | Int(bytes[offset + 4 + $1]) << (8 * $1) }
            switch type {
            case "VP8L": return .lossless
            case "ANIM", "ANMF": return .animated
            case "VP8 ": return .lossy
            case "VP8X":
                // Flags: bit 1 is animation.
                if offset + 8 < bytes.count, bytes[offset + 8] & 0x02 != 0 { return .animated }
            default: break
            }
            guard size >= 0, size <= bytes.count else { break }
            offset += 8 + size + (size & 1)
        }
        // Unknown: counted as the costlier of the stills.
        return .lossless
    }
}
