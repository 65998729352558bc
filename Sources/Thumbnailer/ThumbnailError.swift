/// Why no thumbnail was made. Every case is a reason to serve a placeholder.
public enum ThumbnailError: Error, Sendable, Equatable {
    /// The bytes are not an image in a format the thumbnailer accepts (JPEG,
    /// PNG, WebP, GIF): HTML, an empty body, random bytes, SVG or PDF.
    case notAnImage
    /// The image ends before its data does (a cut download); it is refused
    /// rather than padded with grey.
    case truncated
    /// The header declares more pixels than ``ThumbnailLimits/maxPixels``
    /// (a decompression bomb); nothing was decoded.
    case tooManyPixels(width: Int, height: Int)
    /// The encoded source is larger than ``ThumbnailLimits/maxSourceBytes``.
    case tooLarge
    /// Decoding the source would take more memory than the whole decode
    /// budget (``DecodeBudget``), estimated from its header (`bytes`);
    /// nothing was decoded.
    case overDecodeBudget(bytes: Int)
    /// libvips was stopped at the job's deadline (``ThumbnailLimits/maxWorkTime``).
    case timedOut
    /// The caller's task was cancelled while the work was still queued.
    case cancelled
    /// Anything else: a damaged image, a bad request (a size out of range) or
    /// a libvips failure. The text is for logs only.
    case failed(String)
}
