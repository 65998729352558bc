/// What an encoded image's header says about it, read without decoding pixels.
public struct ImageInfo: Sendable, Equatable {
    /// The width as displayed, that is after the EXIF orientation is applied.
    public var width: Int
    /// The height as displayed, that is after the EXIF orientation is applied.
    public var height: Int
    /// The encoding: `jpeg`, `png`, `webp` or `gif`.
    public var format: String
    /// The EXIF orientation (1 to 8; 1 when the image has none). Orientations
    /// 5 to 8 turn the image a quarter, so the stored pixels are `height` wide.
    public var orientation: Int

    /// Header facts for an image.
    public init(width: Int, height: Int, format: String, orientation: Int = 1) {
        self.width = width
        self.height = height
        self.format = format
        self.orientation = orientation
    }
}
