import ImageFormats

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

/// Which thumbnail: an item and a variant. Thumbnails are addressed by this
/// alone, never by a URL, so no visitor can make the server fetch a URL of their choosing.
public struct ThumbnailKey: Sendable, Hashable {
    /// The item's id.
    public var itemID: Int64
    /// The variant.
    public var variant: ThumbnailVariant

    /// Makes a key.
    public init(itemID: Int64, variant: ThumbnailVariant) {
        self.itemID = itemID
        self.variant = variant
    }
}
