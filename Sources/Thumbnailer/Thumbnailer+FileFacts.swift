import Foundation

extension Thumbnailer {
    /// The libvips file loaders accepted, by the format name they load: the
    /// formats ``thumbnail(of:width:height:format:quality:)`` accepts.
    static let acceptedFileLoaders: [String: String] = [
        "VipsForeignLoadJpegSource": "jpeg",
        "VipsForeignLoadPngSource": "png",
        "VipsForeignLoadWebpSource": "webp",
        "VipsForeignLoadNsgifSource": "gif",
    ]

    /// What the header of the image file at `path` says, for a folder import;
    /// nil when it is not a JPEG, PNG, WebP or GIF that libvips can read (text,
    /// a cut header, a directory, a missing file, another image format).
    ///
    /// Reads the header only, on the calling thread, without the worker pool:
    /// no pixel is decoded, so this takes a few kilobytes of reading (a GIF's
    /// frames are scanned, not decoded). ``ThumbnailLimits`` are not applied:
    /// a decompression bomb's declared size is reported as it is, so an import
    /// can store it; ``thumbnail(of:width:height:format:quality:)`` refuses it
    /// later, before decoding.
    public static func facts(ofFile path: String) -> ImageFileFacts? {
        // A FIFO or a device would block libvips' read, or never end.
        guard LibVips.started, isRegularFile(path) else { return nil }
        let facts: ImageFileFacts?? = LibVips.withFileHeader(at: path) { image, loader in
            guard let format = acceptedFileLoaders[loader], image.width > 0, image.height > 0 else { return nil }
            let upright = image.uprightSize
            return ImageFileFacts(width: upright.width, height: upright.height, format: format, taken: taken(image))
        }
        return facts ?? nil
    }

    /// When the picture was taken: EXIF `DateTimeOriginal`, else `DateTime`,
    /// each with its own offset field when the camera wrote one.
    private static func taken(_ image: VipsImageView) -> Date? {
        let candidates = [
            ("exif-ifd2-DateTimeOriginal", "exif-ifd2-OffsetTimeOriginal"),
            ("exif-ifd0-DateTime", "exif-ifd2-OffsetTime"),
        ]
        for (field, offset) in candidates {
            if let text = image.stringField(field), let date = ExifDate.parse(text, offset: image.stringField(offset)) {
                return date
            }
        }
        return nil
    }

    /// Whether `path` names a regular file, following symbolic links.
    private static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }
}
