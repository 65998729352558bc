/// The encodings a generated original (see ``Thumbnailer/original(width:height:seed:format:)``)
/// can be made in: the formats a real feed's origin serves.
public enum OriginalFormat: String, Sendable, CaseIterable {
    case jpeg
    case png
    case webp

    /// The media type to serve the original with.
    public var mediaType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        }
    }
}
