import Foundation
import Testing

@testable import Thumbnailer

@Suite("Image file facts for folder imports")
struct FileFactsTests {
    @Test("A JPEG's DateTimeOriginal is when it was taken, ahead of DateTime")
    func dateTimeOriginal() throws {
        let file = try ScratchImage.jpeg(fields: [
            "exif-ifd2-DateTimeOriginal": "2019:05:04 12:01:02", "exif-ifd0-DateTime": "2020:01:01 00:00:00",
        ])
        let facts = try #require(Thumbnailer.facts(ofFile: file.path))
        #expect(facts == ImageFileFacts(width: 64, height: 32, format: "jpeg", taken: Date(timeIntervalSince1970: 1_556_971_262)))
    }

    @Test("OffsetTimeOriginal shifts DateTimeOriginal to UTC")
    func offset() throws {
        let file = try ScratchImage.jpeg(fields: [
            "exif-ifd2-DateTimeOriginal": "2019:05:04 12:01:02", "exif-ifd2-OffsetTimeOriginal": "+02:00",
        ])
        #expect(Thumbnailer.facts(ofFile: file.path)?.taken == Date(timeIntervalSince1970: 1_556_964_062))
    }

    @Test("Without DateTimeOriginal, DateTime is used")
    func dateTimeOnly() throws {
        let file = try ScratchImage.jpeg(fields: ["exif-ifd0-DateTime": "2018:01:02 03:04:05"])
        #expect(Thumbnailer.facts(ofFile: file.path)?.taken == Date(timeIntervalSince1970: 1_514_862_245))
    }

    @Test("No date, or the blank one cameras write, is no date")
    func noDate() throws {
        let plain = try ScratchImage.jpeg(fields: [:])
        #expect(Thumbnailer.facts(ofFile: plain.path) == ImageFileFacts(width: 64, height: 32, format: "jpeg"))
        let blank = try ScratchImage.jpeg(fields: ["exif-ifd2-DateTimeOriginal": "0000:00:00 00:00:00"])
        #expect(Thumbnailer.facts(ofFile: blank.path) == ImageFileFacts(width: 64, height: 32, format: "jpeg"))
    }

    @Test("Orientation 6 swaps width and height")
    func orientation() throws {
        let file = try ScratchImage.jpeg(fields: [:], orientation: 6)
        #expect(Thumbnailer.facts(ofFile: file.path) == ImageFileFacts(width: 32, height: 64, format: "jpeg"))
        let upright = try ScratchImage.jpeg(fields: [:], orientation: 3)
        #expect(Thumbnailer.facts(ofFile: upright.path) == ImageFileFacts(width: 64, height: 32, format: "jpeg"))
    }

    @Test("PNG, WebP and GIF are read too")
    func otherFormats() throws {
        let png = try ScratchImage.encoded(.png())
        #expect(Thumbnailer.facts(ofFile: png.path) == ImageFileFacts(width: 64, height: 32, format: "png"))
        let webp = try ScratchImage.encoded(.webp(quality: 80))
        #expect(Thumbnailer.facts(ofFile: webp.path) == ImageFileFacts(width: 64, height: 32, format: "webp"))
        // GIF89a, 1 × 1, one white pixel.
        let gif = try ScratchImage(bytes: Array("GIF89a".utf8) + [
            0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x2C, 0x00, 0x00, 0x00, 0x00,
            0x01, 0x00, 0x01, 0x00, 0x00, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3B,
        ])
        #expect(Thumbnailer.facts(ofFile: gif.path) == ImageFileFacts(width: 1, height: 1, format: "gif"))
    }

    @Test("A decompression bomb's declared size is reported: thumbnailing refuses it later")
    func bomb() throws {
        let file = try ScratchImage(bytes: Craft.bombPNG())
        #expect(Thumbnailer.facts(ofFile: file.path) == ImageFileFacts(width: 50_000, height: 50_000, format: "png"))
    }

    @Test("What is not a readable image is nil, never a crash")
    func notImages() throws {
        let text = try ScratchImage(bytes: Array("<rss version=\"2.0\"></rss>\n".utf8))
        #expect(Thumbnailer.facts(ofFile: text.path) == nil)
        let empty = try ScratchImage(bytes: [])
        #expect(Thumbnailer.facts(ofFile: empty.path) == nil)
        let whole = try ScratchImage.jpeg(fields: ["exif-ifd2-DateTimeOriginal": "2019:05:04 12:01:02"])
        let bytes = try #require(FileManager.default.contents(atPath: whole.path))
        // Cut inside the header: before the EXIF block ends, and in the middle of the frame header (SOF0).
        let frame = try #require(bytes.firstRange(of: [0xFF, 0xC0])).lowerBound
        for length in [3, 20, 200, frame + 5] {
            let cut = try ScratchImage(bytes: Array(bytes.prefix(length)))
            #expect(Thumbnailer.facts(ofFile: cut.path) == nil, "cut at \(length) of \(bytes.count)")
        }
        // Cut after the header: the facts are there (only the header is read); thumbnailing finds the cut.
        let late = try ScratchImage(bytes: Array(bytes.prefix(bytes.count - 100)))
        #expect(Thumbnailer.facts(ofFile: late.path)?.width == 64)
        #expect(Thumbnailer.facts(ofFile: whole.path + ".missing") == nil)
        #expect(Thumbnailer.facts(ofFile: FileManager.default.temporaryDirectory.path) == nil)
        #expect(Thumbnailer.facts(ofFile: "") == nil)
        // A FIFO named like a photo would block a reader for ever; it is not even opened.
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-facts-\(UUID().uuidString).jpg").path
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        #expect(Thumbnailer.facts(ofFile: fifo) == nil)
    }

    @Test("A name ending in brackets is a name, not libvips load options")
    func bracketedName() throws {
        let file = try ScratchImage.jpeg(fields: [:], suffix: ".jpg[shrink=2]")
        #expect(Thumbnailer.facts(ofFile: file.path) == ImageFileFacts(width: 64, height: 32, format: "jpeg"))
    }

    @Test(
        "EXIF date-times as libvips reports them",
        arguments: [
            ("2019:05:04 12:01:02 (2019:05:04 12:01:02, ASCII, 20 components, 20 bytes)", nil, 1_556_971_262),
            ("2019:05:04 12:01:02", "+02:00 (+02:00, ASCII, 7 components, 7 bytes)", 1_556_964_062),
            ("2020:02:29 23:59:59", "-05:30", 1_583_040_599),
            ("1999-12-31 23:59:59", "  :  ", 946_684_799),
            ("1969:07:20 20:17:40", nil, -14_182_940),
        ] as [(String, String?, Int)])
    func exifDates(text: String, offset: String?, seconds: Int) {
        #expect(ExifDate.parse(text, offset: offset) == Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    @Test(
        "Strings that are no EXIF date-time",
        arguments: ["", "2019:05:04", "0000:00:00 00:00:00", "    :  :     :  :  ", "2019:02:29 12:00:00",
                    "2019:13:01 12:00:00", "2019:05:04 24:00:00", "2019:05:04T12:01:02", "２０１９:05:04 12:01:02"])
    func notExifDates(text: String) {
        #expect(ExifDate.parse(text) == nil)
    }
}

/// An image file in the temporary directory, removed when the value goes.
final class ScratchImage {
    let path: String

    init(bytes: [UInt8], suffix: String = ".img") throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-facts-\(UUID().uuidString)\(suffix)").path
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            throw CocoaError(.fileWriteUnknown)
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A 64 × 32 JPEG with the given libvips metadata fields (libvips 8.14
    /// writes `exif-ifd…` strings back into the EXIF block) and orientation.
    static func jpeg(fields: [String: String], orientation: Int? = nil, suffix: String = ".jpg") throws -> ScratchImage {
        try encoded(.jpegKeepingMetadata(quality: 90), suffix: suffix) { image in
            for (name, value) in fields { image.setStringField(name, value) }
            if let orientation { image.setIntField("orientation", orientation) }
        }
    }

    /// A 64 × 32 image in `encoding`, with `tag` applied before saving.
    static func encoded(
        _ encoding: LibVips.Encoding, suffix: String = ".img", tag: (VipsImageView) -> Void = { _ in }
    ) throws -> ScratchImage {
        precondition(LibVips.started)
        let pixels = (0..<(64 * 32 * 3)).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let bytes = pixels.withUnsafeBytes { raw in
            LibVips.withRGB(raw, width: 64, height: 32) { image -> [UInt8]? in
                tag(image)
                return image.save(encoding)
            }
        }
        return try ScratchImage(bytes: try #require(bytes ?? nil), suffix: suffix)
    }
}
