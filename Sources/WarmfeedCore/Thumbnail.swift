import ImageFormats
import Reckoning

/// One kind of thumbnail of an item: a density and a format.
public struct ThumbnailVariant: Sendable, Hashable {
    /// 1 for the `1x` width, 2 for `2x` (high-density screens).
    public var scale: Int
    /// The format.
    public var format: ImageFormat

    /// Makes a variant.
    public init(scale: Int, format: ImageFormat) {
        self.scale = scale
        self.format = format
    }

    /// The densities the server makes.
    public static let scales = [1, 2]

    /// Reads a variant's URL name (`1x`, `2x`) with the format the client accepts;
    /// nil for any other name.
    public init?(name: String, format: ImageFormat) {
        guard let scale = Self.scales.first(where: { "\($0)x" == name }) else { return nil }
        self.init(scale: scale, format: format)
    }

    /// The variant's URL name.
    public var name: String { "\(scale)x" }

    /// The formats pre-warm makes, in the order it makes them: WebP, which
    /// every browser of the last years takes, then AVIF, fewer bytes but
    /// several times the time to make. JPEG only when a client asks for it.
    public static let prewarmedFormats: [ImageFormat] = [.webp, .avif]

    /// The variants a reader's screen and browser ask for, as the pre-warm
    /// planner's bits: bit 0 for 1x and bit 1 for 2x in WebP, bits 2 and 3
    /// for the same in AVIF.
    public static func bits(scales: [Int], formats: [ImageFormat] = [.webp]) -> UInt8 {
        var bits: UInt8 = 0
        for format in formats {
            guard let place = prewarmedFormats.firstIndex(of: format) else { continue }
            for scale in scales where (1...2).contains(scale) { bits |= 1 << (place * 2 + scale - 1) }
        }
        return bits
    }

    /// The variants in the pre-warm planner's `bits`: every WebP first, smallest first, then every AVIF.
    public static func variants(inBits bits: UInt8) -> [ThumbnailVariant] {
        prewarmedFormats.enumerated().flatMap { place, format in
            scales.filter { bits & 1 << (place * 2 + $0 - 1) != 0 }.map { ThumbnailVariant(scale: $0, format: format) }
        }
    }

    /// The scale a screen of `pixelRatio` device pixels per CSS pixel loads
    /// from a `1x, 2x` srcset: browsers take the smallest density at least
    /// the screen's, so 2x for any ratio above 1.
    public static func scale(forPixelRatio pixelRatio: Double) -> Int {
        pixelRatio > 1 ? 2 : 1
    }
}

/// One picture of one item, as thumbnails and originals are kept: the item's
/// id and a digest of where its image comes from in its store (`tag`).
///
/// The id alone names another picture once the store is replaced under a used
/// data folder, the feed is imported into another store, or the item's image
/// URL changes; the tag tells those apart, so a kept thumbnail or original is
/// always the picture its item names now. Thumbnail URLs carry it too
/// (`/thumbs/<id>-<tag>/1x`), so a browser's copy follows the picture as well.
public struct Picture: Sendable, Hashable {
    /// The item's id.
    public var itemID: Int64
    /// FNV-1a of the store's epoch, the image URL and its declared size (see `init(item:epoch:)`).
    public var tag: UInt32

    /// Makes a picture from its parts (as a URL or a file name gives them).
    public init(itemID: Int64, tag: UInt32) {
        self.itemID = itemID
        self.tag = tag
    }

    /// The picture `item` has now in the store of `epoch`; nil when it has no id or no image.
    public init?(item: FeedItem, epoch: UInt32) {
        guard let id = item.id, let url = item.imageURL else { return nil }
        self.init(itemID: id, tag: Self.tag(imageURL: url, width: item.imageWidth, height: item.imageHeight, epoch: epoch))
    }

    /// The digest a picture is told apart by: the store's epoch (a replaced
    /// store has another), the image URL and the size the source declared.
    public static func tag(imageURL: String, width: Int?, height: Int?, epoch: UInt32) -> UInt32 {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(imageURL.utf8.count + 24)
        withUnsafeBytes(of: epoch.littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: Int64(width ?? -1).littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: Int64(height ?? -1).littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: imageURL.utf8)
        let hash = bytes.withUnsafeBytes { FNV1a.hash64($0) }
        // Both halves folded: FNV-1a's low bits alone mix the last bytes least.
        return UInt32(truncatingIfNeeded: hash ^ hash >> 32)
    }

    /// The picture's name in URLs and file names: `<id>-<tag as 8 hex digits>`.
    public var name: String {
        let hex = String(tag, radix: 16)
        return "\(itemID)-" + String(repeating: "0", count: 8 - hex.count) + hex
    }

    /// Reads `name`'s form back; nil for anything else (a bare id included).
    public init?(name: some StringProtocol) {
        let utf8 = name.utf8
        guard let dash = utf8.firstIndex(of: UInt8(ascii: "-")) else { return nil }
        let id = name[name.startIndex..<dash]
        let hex = name[name.index(after: dash)...]
        guard !id.isEmpty, id.count <= 18, id.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let itemID = Int64(id), itemID > 0,
            hex.count == 8, hex.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }), let tag = UInt32(hex, radix: 16)
        else { return nil }
        self.init(itemID: itemID, tag: tag)
    }
}

/// Which thumbnail: a picture and a variant. Thumbnails are addressed by this
/// alone, never by a URL, so no visitor can make the server fetch a URL of their choosing.
public struct ThumbnailKey: Sendable, Hashable {
    /// The picture.
    public var picture: Picture
    /// The variant.
    public var variant: ThumbnailVariant

    /// The item's id.
    public var itemID: Int64 { picture.itemID }

    /// Makes a key.
    public init(picture: Picture, variant: ThumbnailVariant) {
        self.picture = picture
        self.variant = variant
    }
}
