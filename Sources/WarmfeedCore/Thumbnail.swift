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

    /// The scales a reader's screen asks for, as the pre-warm planner's bits
    /// (bit 0 for 1x, bit 1 for 2x).
    public static func bits(scales: [Int]) -> UInt8 {
        scales.reduce(0) { bits, scale in (1...2).contains(scale) ? bits | 1 << (scale - 1) : bits }
    }

    /// The scales in the pre-warm planner's `bits`, smallest first.
    public static func scales(inBits bits: UInt8) -> [Int] {
        Self.scales.filter { bits & 1 << ($0 - 1) != 0 }
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
