/// What the thumbnailer agrees to decode.
///
/// Both limits are checked before any pixel is decoded, so a hostile origin
/// cannot make the server allocate gigabytes (a decompression bomb: a PNG of a
/// few kilobytes that declares 50,000 × 50,000 pixels) or hold a huge body.
public struct ThumbnailLimits: Sendable, Equatable {
    /// The most pixels (width × height, as the source's header declares them)
    /// a source may have.
    public var maxPixels: Int

    /// The most encoded bytes a source may have.
    public var maxSourceBytes: Int

    /// Limits for a thumbnail server: 50 megapixels and 32 MiB by default.
    public init(maxPixels: Int = 50_000_000, maxSourceBytes: Int = 32 << 20) {
        self.maxPixels = maxPixels
        self.maxSourceBytes = maxSourceBytes
    }
}
