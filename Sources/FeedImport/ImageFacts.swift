import Foundation

/// What the image reader learned of one image file. The reader is injected
/// into `ImageFolder.scan` (the app wires libvips), so that this module stays
/// free of C and its tests need no real images.
public struct ImageFacts: Sendable, Equatable {
    /// The width in pixels.
    public var width: Int
    /// The height in pixels.
    public var height: Int
    /// When the picture was taken: EXIF `DateTimeOriginal`, else `DateTime`;
    /// nil when the file does not say (the file's modification time is used).
    public var taken: Date?

    /// The facts of a `width` × `height` image taken at `taken`.
    public init(width: Int, height: Int, taken: Date? = nil) {
        self.width = width
        self.height = height
        self.taken = taken
    }
}
