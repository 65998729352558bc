/// The image formats thumbnails are made and served in: one type for the
/// thumbnailer that encodes them, the cache that keys them and the routes
/// that negotiate them.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable {
    /// WebP: the default for browsers that accept it, about a third smaller
    /// than JPEG at the same quality.
    case webp
    /// JPEG: for clients that do not accept WebP.
    case jpeg
    /// AVIF: for clients that accept it, 0.48–0.78× WebP's bytes at the same
    /// SSIM on thumbnails, but several times its encoding time: made
    /// ahead by pre-warm, never waited for by a client that also takes WebP.
    case avif

    /// The media type to serve it with.
    public var mediaType: String {
        switch self {
        case .webp: "image/webp"
        case .jpeg: "image/jpeg"
        case .avif: "image/avif"
        }
    }

    /// The encoder's quality (1–100) thumbnails are made at: WebP's and
    /// JPEG's 75. AVIF's is chosen picture by picture, the lowest whose SSIM
    /// reaches the WebP's (the thumbnailer's `QualitySearch`); 47, where its
    /// mean SSIM on the demo's pictures and on real photographs matched
    /// WebP's, is used only when SSIM cannot be measured (docs/benchmarks-history.md, "AVIF").
    public var thumbnailQuality: Int {
        switch self {
        case .webp, .jpeg: 75
        case .avif: 47
        }
    }
}
