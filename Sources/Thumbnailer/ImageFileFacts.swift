import Foundation

/// What an image file's header says, for a folder import: enough to store the
/// item (its size as displayed, its format, when it was taken) without
/// decoding a pixel.
public struct ImageFileFacts: Sendable, Equatable {
    /// The width as displayed, that is after the EXIF orientation is applied.
    public var width: Int
    /// The height as displayed, that is after the EXIF orientation is applied.
    public var height: Int
    /// The encoding: `jpeg`, `png`, `webp` or `gif`.
    public var format: String
    /// When the picture was taken, from EXIF `DateTimeOriginal`, else EXIF
    /// `DateTime`; nil when the file has neither (or a blank one). Read as UTC
    /// unless the file records its offset (`OffsetTimeOriginal`, `OffsetTime`).
    public var taken: Date?

    /// Facts for an image file.
    public init(width: Int, height: Int, format: String, taken: Date? = nil) {
        self.width = width
        self.height = height
        self.format = format
        self.taken = taken
    }
}
