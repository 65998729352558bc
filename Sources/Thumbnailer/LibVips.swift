import CVips

/// The one Swift file that speaks libvips' C API; everything else in the module
/// goes through it.
///
/// Ownership: every `VipsImage` is made by one `with…` function, handed to its
/// body as a borrowed ``VipsImageView``, and released (`g_object_unref`) by that
/// function's `defer`, exactly once. Every buffer libvips allocates for us is
/// copied into a Swift array and released with `g_free`, exactly once, right
/// where it is made. Images opened from encoded bytes point into those bytes
/// without copying them, so the bytes must outlive the `with…` call, which
/// taking them as a borrowed pointer for the duration of the call guarantees.
enum LibVips {
    /// Whether libvips started; it is started once per process, on first use
    /// (a `static let` is initialised exactly once, thread-safely).
    static let started: Bool = warmfeed_vips_start("warmfeed") == 0

    /// How a damaged source should be treated while decoding.
    enum FailOn: Int32 {
        /// Stop on truncation or any serious decoder error, never pad with grey.
        case error = 2  // VIPS_FAIL_ON_ERROR
    }

    /// Which part of the image a crop keeps.
    enum Crop: Int32 {
        case centre = 1  // VIPS_INTERESTING_CENTRE
        case attention = 3  // VIPS_INTERESTING_ATTENTION
    }

    /// An encoding to save an image in.
    enum Encoding {
        case jpeg(quality: Int)
        case jpegKeepingMetadata(quality: Int)
        /// Effort from 0 (fastest) to 6 (smallest).
        case webp(quality: Int, effort: Int = 4)
        /// AV1 in HEIF, 4:4:4; effort from 0 (fastest) to 9 (smallest).
        case avif(quality: Int, effort: Int)
        /// zlib compression from 0 to 9.
        case png(compression: Int = 6)
        /// Sources whose decoders hold the whole picture, for the decode budget's tests.
        case progressiveJPEG(quality: Int)
        case interlacedPNG(bitDepth: Int)
        case gif
    }

    /// The libvips loader that recognises these bytes (for example
    /// `VipsForeignLoadJpegBuffer`), or nil when none does. Reads a few bytes.
    static func loaderName(of bytes: UnsafeRawBufferPointer) -> String? {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return nil }
        guard let name = vips_foreign_find_load_buffer(base, bytes.count) else {
            _ = takeError()
            return nil
        }
        return String(cString: name)
    }

    /// Opens `bytes` and hands the image to `body`; nil when the header
    /// cannot be read. Decodes no pixels until `body` reads them (once, top
    /// to bottom: the access is sequential), so a header read costs
    /// microseconds and a thumbnail just made can be decoded to be compared.
    static func withHeader<R>(of bytes: UnsafeRawBufferPointer, _ body: (VipsImageView) -> R) -> R? {
        guard let base = bytes.baseAddress, bytes.count > 0,
            let image = warmfeed_vips_open_header(base, bytes.count)
        else { return nil }
        defer { g_object_unref(image) }
        return body(VipsImageView(pointer: image))
    }

    /// Opens the file at `path` for its header only and hands the image and
    /// the class name of its loader (for example `VipsForeignLoadJpegSource`)
    /// to `body`; nil when the file cannot be opened, no loader recognises it,
    /// or its header cannot be read. Decodes no pixels.
    ///
    /// The path is taken as it is. `vips_image_new_from_file` would read a
    /// trailing `[…]` in it as load options: a file named `a.jpg[shrink=2]` is
    /// then looked for as `a.jpg` (seen with libvips 8.14).
    static func withFileHeader<R>(at path: String, _ body: (VipsImageView, String) -> R) -> R? {
        guard let source = vips_source_new_from_file(path) else {
            _ = takeError()
            return nil
        }
        defer { g_object_unref(source) }
        guard let loader = vips_foreign_find_load_source(source),
            let image = warmfeed_vips_open_source_header(source)
        else {
            _ = takeError()
            return nil
        }
        defer { g_object_unref(image) }
        return body(VipsImageView(pointer: image), String(cString: loader))
    }

    /// Builds the lazy thumbnail pipeline for `bytes` and hands it to `body`,
    /// which saves it (that is when the pixels are decoded and resized); nil
    /// when the pipeline cannot be built.
    static func withThumbnail<R>(
        of bytes: UnsafeRawBufferPointer, width: Int, height: Int, crop: Crop, failOn: FailOn,
        _ body: (VipsImageView) -> R
    ) -> R? {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return nil }
        var out: UnsafeMutablePointer<VipsImage>?
        let status = warmfeed_vips_thumbnail(
            base, bytes.count, &out, Int32(width), Int32(height), crop.rawValue, failOn.rawValue)
        guard status == 0, let image = out else {
            if let image = out { g_object_unref(image) }
            return nil
        }
        defer { g_object_unref(image) }
        return body(VipsImageView(pointer: image))
    }

    /// Wraps 8-bit interleaved RGB pixels (copied) as an image and hands it to
    /// `body`; nil when libvips refuses the buffer.
    static func withRGB<R>(
        _ pixels: UnsafeRawBufferPointer, width: Int, height: Int, _ body: (VipsImageView) -> R
    ) -> R? {
        guard let base = pixels.baseAddress, pixels.count == width * height * 3,
            let image = vips_image_new_from_memory_copy(
                base, pixels.count, Int32(width), Int32(height), 3, VIPS_FORMAT_UCHAR)
        else { return nil }
        defer { g_object_unref(image) }
        return body(VipsImageView(pointer: image))
    }

    /// Enlarges `sketch` to `width` × `height`, adds Gaussian grain (`sigma`,
    /// repeatable from `seed`) and hands the result to `body`; nil on failure.
    static func withEnlarged<R>(
        _ sketch: VipsImageView, width: Int, height: Int, grain sigma: Double, seed: Int32,
        _ body: (VipsImageView) -> R
    ) -> R? {
        var out: UnsafeMutablePointer<VipsImage>?
        let status = warmfeed_vips_enlarge_with_grain(
            sketch.pointer, &out, Int32(width), Int32(height), sigma, seed)
        guard status == 0, let image = out else {
            if let image = out { g_object_unref(image) }
            return nil
        }
        defer { g_object_unref(image) }
        return body(VipsImageView(pointer: image))
    }

    /// The text of libvips' error buffer, which is then cleared.
    ///
    /// The buffer is global to the process, so under concurrent work it may
    /// hold messages from other threads too: use it for diagnostics only, never
    /// to decide what went wrong.
    static func takeError() -> String {
        guard let copy = vips_error_buffer_copy() else { return "" }
        defer { g_free(copy) }
        return String(cString: copy)
    }

    /// Stops the computation of `image` from any thread: the next strip asked
    /// of it fails, and so does the save or copy that asked.
    static func kill(_ image: UnsafeMutablePointer<VipsImage>) {
        vips_image_set_kill(image, 1)
    }

    /// Frees libvips' per-thread state; called by a worker thread as it exits.
    static func threadDidFinish() {
        vips_thread_shutdown()
    }
}

/// A borrowed view of a `VipsImage` owned by one of ``LibVips``' `with…` calls.
/// It must not outlive the call that produced it.
struct VipsImageView {
    let pointer: UnsafeMutablePointer<VipsImage>

    var width: Int { Int(vips_image_get_width(pointer)) }
    var height: Int { Int(vips_image_get_height(pointer)) }
    var bands: Int { Int(vips_image_get_bands(pointer)) }

    /// The bytes of one band of one pixel: 1 for 8-bit images, 2 for 16-bit.
    var sampleBytes: Int { Int(warmfeed_vips_sample_bytes(pointer)) }

    /// Whether each band of a pixel is one byte (libvips' `uchar`).
    var isEightBit: Bool { vips_image_get_format(pointer) == VIPS_FORMAT_UCHAR }

    /// Computes the image into memory and hands the copy to `body`, so several
    /// encodings read the same pixels instead of each decoding and resizing
    /// the source again; nil when the pixels cannot be made.
    func withPixelsInMemory<R>(_ body: (VipsImageView) -> R) -> R? {
        guard let copy = vips_image_copy_memory(pointer) else { return nil }
        defer { g_object_unref(copy) }
        return body(VipsImageView(pointer: copy))
    }

    /// Whether the image carries a metadata field (`exif-data`, `xmp-data`, …).
    func hasField(_ name: String) -> Bool {
        vips_image_get_typeof(pointer, name) != 0
    }

    /// An integer metadata field, or nil when absent.
    func intField(_ name: String) -> Int? {
        guard hasField(name) else { return nil }
        var value: Int32 = 0
        guard vips_image_get_int(pointer, name, &value) == 0 else {
            _ = LibVips.takeError()
            return nil
        }
        return Int(value)
    }

    /// The EXIF orientation, 1 to 8; 1 when absent or out of range.
    var orientation: Int {
        intField("orientation").flatMap { (1...8).contains($0) ? $0 : nil } ?? 1
    }

    /// The size as displayed: orientations 5 to 8 turn the image a quarter.
    var uprightSize: (width: Int, height: Int) {
        orientation >= 5 ? (height, width) : (width, height)
    }

    /// A string metadata field, or nil when absent. For EXIF fields libvips
    /// appends a description to the value: `"2019:05:04 12:01:02 (2019:05:04
    /// 12:01:02, ASCII, 20 components, 20 bytes)"`.
    func stringField(_ name: String) -> String? {
        guard hasField(name) else { return nil }
        var value: UnsafePointer<CChar>?
        guard vips_image_get_string(pointer, name, &value) == 0, let value else {
            _ = LibVips.takeError()
            return nil
        }
        return String(cString: value)
    }

    /// Sets a string metadata field; libvips writes `exif-ifd…` fields back
    /// into the EXIF block when saving JPEG or WebP (used to make test images).
    func setStringField(_ name: String, _ value: String) {
        vips_image_set_string(pointer, name, value)
    }

    /// Sets an integer metadata field (used to tag originals with an orientation).
    func setIntField(_ name: String, _ value: Int) {
        vips_image_set_int(pointer, name, Int32(value))
    }

    /// The image encoded, or nil when libvips fails (for a lazy thumbnail this
    /// is where a damaged source is found).
    func save(_ encoding: LibVips.Encoding) -> [UInt8]? {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let status: Int32
        switch encoding {
        case .jpeg(let quality):
            status = warmfeed_vips_save_jpeg(pointer, &buffer, &length, Int32(quality))
        case .jpegKeepingMetadata(let quality):
            status = warmfeed_vips_save_jpeg_keeping_metadata(pointer, &buffer, &length, Int32(quality))
        case .webp(let quality, let effort):
            status = warmfeed_vips_save_webp(pointer, &buffer, &length, Int32(quality), Int32(effort))
        case .avif(let quality, let effort):
            status = warmfeed_vips_save_avif(pointer, &buffer, &length, Int32(quality), Int32(effort))
        case .png(let compression):
            status = warmfeed_vips_save_png(pointer, &buffer, &length, Int32(compression))
        case .progressiveJPEG(let quality):
            status = warmfeed_vips_save_jpeg_progressive(pointer, &buffer, &length, Int32(quality))
        case .interlacedPNG(let bitDepth):
            status = warmfeed_vips_save_png_interlaced(pointer, &buffer, &length, Int32(bitDepth))
        case .gif:
            status = warmfeed_vips_save_gif(pointer, &buffer, &length)
        }
        return LibVips.takeBuffer(buffer, length: length, ok: status == 0)
    }

    /// Every pixel, decoded, as interleaved bytes (`bands` per pixel); nil on failure.
    func pixels() -> [UInt8]? {
        var length = 0
        let buffer = vips_image_write_to_memory(pointer, &length)
        return LibVips.takeBuffer(buffer, length: length, ok: buffer != nil)
    }
}

extension LibVips {
    /// Copies a buffer libvips allocated into Swift memory and frees it.
    fileprivate static func takeBuffer(_ buffer: UnsafeMutableRawPointer?, length: Int, ok: Bool) -> [UInt8]? {
        defer { if let buffer { g_free(buffer) } }
        guard ok, let buffer else { return nil }
        return [UInt8](UnsafeRawBufferPointer(start: buffer, count: length))
    }
}
