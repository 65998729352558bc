import ImageFormats

/// An encoded thumbnail, ready to be cached and served.
public struct Thumbnail: Sendable, Equatable {
    /// The encoded image, without metadata (no EXIF, XMP or ICC profile).
    public var bytes: [UInt8]
    /// Its width in pixels: always the width asked for.
    public var width: Int
    /// Its height in pixels: always the height asked for.
    public var height: Int
    /// Its encoding.
    public var format: ImageFormat
    /// Its two colours, when it was made here (not read back from a cache).
    public var preview: ThumbnailPreview?

    /// A thumbnail made of already encoded bytes (for example read back from a disk cache).
    public init(bytes: [UInt8], width: Int, height: Int, format: ImageFormat, preview: ThumbnailPreview? = nil) {
        self.preview = preview
        self.bytes = bytes
        self.width = width
        self.height = height
        self.format = format
    }
}
