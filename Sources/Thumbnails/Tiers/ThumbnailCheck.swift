import ImageFormats
import WarmfeedCore

/// Whether bytes that came from outside this process (a peer's answer, a
/// value in Redis) are what they say: a whole image of the variant's format
/// (its header read, see `ImageHeader`) that fits the variant's box. Anything
/// else is never served or stored: it is a miss.
enum ThumbnailCheck {
    static func holds(_ bytes: [UInt8], as variant: ThumbnailVariant) -> Bool {
        guard let header = ImageHeader.read(bytes, as: variant.format) else { return false }
        return header.width <= ThumbnailService.box.width * variant.scale && header.height <= ThumbnailService.box.height * variant.scale
    }
}
