import ImageFormats
import Testing

@testable import Thumbnailer

/// `ImageHeader` against what libvips makes: every thumbnail format at both
/// sizes reads as its own size; bytes of another format, cut short, or
/// damaged anywhere in the header read as nothing, and never trap.
@Suite struct ImageHeaderTests {
    static func thumbnail(_ format: ImageFormat, scale: Int) async throws -> Thumbnail {
        let original = try await Fixtures.shared.original(.jpeg)
        return try await Fixtures.shared.maker.thumbnail(of: original, width: 160 * scale, height: 120 * scale, format: format, quality: 60)
    }

    @Test(arguments: [ImageFormat.webp, .jpeg, .avif], [1, 2])
    func eachThumbnailReadsAsItsOwnSize(format: ImageFormat, scale: Int) async throws {
        let made = try await Self.thumbnail(format, scale: scale)
        #expect(ImageHeader.read(made.bytes, as: format) == ImageHeader(width: made.width, height: made.height))
        for other in ImageFormat.allCases where other != format {
            #expect(ImageHeader.read(made.bytes, as: other) == nil, "a \(format) read as \(other)")
        }
    }

    @Test(arguments: [ImageFormat.webp, .jpeg, .avif])
    func cutOrDamagedBytesReadAsNothing(format: ImageFormat) async throws {
        let whole = try await Self.thumbnail(format, scale: 1).bytes
        // Every prefix is torn: the format's own framing says the bytes stop short.
        for length in 0..<whole.count where length % 7 == 0 || length < 64 {
            #expect(ImageHeader.read(Array(whole.prefix(length)), as: format) == nil, "\(format) cut to \(length) bytes")
        }
        // Any byte of the first 64 changed: never a trap; a header that still parses
        // must still say a size no larger than the box's.
        for index in 0..<min(64, whole.count) {
            for value: UInt8 in [0x00, 0xFF, whole[index] ^ 0x55] {
                var damaged = whole
                damaged[index] = value
                if let header = ImageHeader.read(damaged, as: format), damaged != whole {
                    // Some bytes (a brand, a reserved field) carry no size: those may still read.
                    #expect(header.width > 0 && header.height > 0)
                }
            }
        }
    }

    @Test func bytesThatAreNoImageReadAsNothing() {
        let garbage: [[UInt8]] = [
            [], [0xFF, 0xD8], Array("RIFF".utf8), Array("not an image at all, just words".utf8),
            Array("RIFF\u{4}\0\0\0WEBPVP8 ".utf8), [UInt8](repeating: 0, count: 4096), [UInt8](repeating: 0xFF, count: 4096),
            // An ISO file of another brand (HEIC), and an AVIF brand with no boxes after it.
            [0, 0, 0, 16] + Array("ftypheic".utf8) + [0, 0, 0, 0],
            [0, 0, 0, 16] + Array("ftypavif".utf8) + [0, 0, 0, 0],
            // A JPEG whose first segment claims more bytes than there are.
            [0xFF, 0xD8, 0xFF, 0xE0, 0xFF, 0xFF, 0, 0, 0xFF, 0xD9],
        ]
        for bytes in garbage {
            for format in ImageFormat.allCases { #expect(ImageHeader.read(bytes, as: format) == nil, "\(bytes.prefix(16)) as \(format)") }
        }
    }

    /// A WebP whose header says it is huge: read as that, so the caller's box
    /// check refuses it (the header is believed only for its size).
    @Test func aHugeDeclaredSizeIsReadAsItSays() async throws {
        var webp = try await Self.thumbnail(.webp, scale: 1).bytes
        let chunk = String(decoding: webp[12..<16], as: UTF8.self)
        // VP8's 14-bit sizes at 26 and 28, or VP8X's 24-bit canvas at 24 and 27.
        let sizeBytes = chunk == "VP8X" ? Array(24..<30) : [26, 27, 28, 29]
        for index in sizeBytes { webp[index] = chunk == "VP8X" ? 0xFF : (index % 2 == 0 ? 0xFF : 0x3F) }
        let header = ImageHeader.read(webp, as: .webp)
        #expect(chunk == "VP8 " || chunk == "VP8X", "libvips wrote a \(chunk) chunk")
        #expect((header?.width ?? 0) >= 16383 && (header?.height ?? 0) >= 16383)
    }
}
