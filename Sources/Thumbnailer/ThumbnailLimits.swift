/// What the thumbnailer agrees to decode.
///
/// The size limits are checked before any pixel is decoded, so a hostile origin
/// cannot make the server allocate gigabytes (a decompression bomb: a PNG of a
/// few kilobytes that declares 50,000 × 50,000 pixels) or hold a huge body.
public struct ThumbnailLimits: Sendable, Equatable {
    /// The most pixels (width × height, as the source's header declares them)
    /// a source may have.
    public var maxPixels: Int

    /// The most encoded bytes a source may have.
    public var maxSourceBytes: Int

    /// The longest libvips may work on one thumbnail, once a worker has it:
    /// past it the work is stopped (between strips; a decoder that reads the
    /// whole image in one call is stopped after it) and the job fails with
    /// ``ThumbnailError/timedOut``. A thumbnail takes tens of milliseconds, an
    /// AVIF a few hundred, a 48-megapixel bomb the decode budget lets in about a second.
    public var maxWorkTime: Duration

    /// Limits for a thumbnail server: 50 megapixels, 32 MiB and 10 s by default.
    public init(maxPixels: Int = 50_000_000, maxSourceBytes: Int = 32 << 20, maxWorkTime: Duration = .seconds(10)) {
        self.maxPixels = maxPixels
        self.maxSourceBytes = maxSourceBytes
        self.maxWorkTime = maxWorkTime
    }
}
