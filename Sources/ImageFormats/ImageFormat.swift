/// The image formats thumbnails are made and served in: one type for the
/// thumbnailer that encodes them, the cache that keys them and the routes
/// that negotiate them.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable {
    /// WebP: the default for browsers that accept it, about a third smaller
    /// than JPEG at the same quality.
    case webp
    /// JPEG: for clients that do not accept WebP.
    case jpeg

    /// The media type to serve it with.
    public var mediaType: String {
        switch self {
        case .webp: "image/webp"
        case .jpeg: "image/jpeg"
        }
    }
}
