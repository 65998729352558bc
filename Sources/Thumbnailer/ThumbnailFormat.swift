/// The encodings a thumbnail is made in.
///
/// WebP is the default for browsers that accept it (smaller for the same
/// quality); JPEG is for the ones that do not.
public enum ThumbnailFormat: String, Sendable, CaseIterable {
    case webp
    case jpeg

    /// The media type to serve the thumbnail with.
    public var mediaType: String {
        switch self {
        case .webp: "image/webp"
        case .jpeg: "image/jpeg"
        }
    }
}
