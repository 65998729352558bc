import CZlib
import Synchronization
import Testing

@testable import Thumbnailer

/// Sources made once per test run and shared by the tests: generating a
/// 1600 × 1200 original takes a moment in a debug build.
actor Fixtures {
    static let shared = Fixtures()

    /// The thumbnailer that makes the fixtures (tests that count jobs make their own).
    let maker = Thumbnailer(workers: 2)
    private var originals: [String: Task<[UInt8], any Error>] = [:]

    /// A 1600 × 1200 generated original, made once however many tests ask at once.
    func original(_ format: OriginalFormat, seed: UInt64 = 7) async throws -> [UInt8] {
        let key = "\(format)-\(seed)"
        if let made = originals[key] { return try await made.value }
        let maker = self.maker
        let making = Task { try await maker.original(width: 1600, height: 1200, seed: seed, format: format) }
        originals[key] = making
        return try await making.value
    }
}

/// Byte-level facts about encoded images, read with libvips (test side only).
enum Inspect {
    static func isJPEG(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: [0xFF, 0xD8, 0xFF])
    }

    static func isWebP(_ bytes: [UInt8]) -> Bool {
        bytes.count > 12 && bytes.starts(with: Array("RIFF".utf8)) && Array(bytes[8..<12]) == Array("WEBP".utf8)
    }

    /// An ISO base media file whose brand is AVIF.
    static func isAVIF(_ bytes: [UInt8]) -> Bool {
        bytes.count > 12 && Array(bytes[4..<12]) == Array("ftypavif".utf8)
    }

    static func isPNG(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }

    /// The metadata fields among `names` that `bytes` carries.
    static func fields(_ names: [String], in bytes: [UInt8]) -> [String] {
        precondition(LibVips.started)
        return bytes.withUnsafeBytes { raw in
            LibVips.withHeader(of: raw) { image in names.filter { image.hasField($0) } }
        } ?? ["<unreadable>"]
    }

    /// The decoded pixels of `bytes`, with their size and band count.
    static func pixels(_ bytes: [UInt8]) -> (width: Int, height: Int, bands: Int, data: [UInt8])? {
        precondition(LibVips.started)
        let decoded = bytes.withUnsafeBytes { raw in
            LibVips.withHeader(of: raw) { image in
                image.pixels().map { (image.width, image.height, image.bands, $0) }
            }
        }
        return decoded ?? nil
    }

    /// The mean colour of a square of `pixels` around (x, y).
    static func colour(
        at x: Int, _ y: Int, in image: (width: Int, height: Int, bands: Int, data: [UInt8])
    ) -> (red: Int, green: Int, blue: Int) {
        var sums = [0, 0, 0]
        var count = 0
        for py in max(0, y - 4)...min(image.height - 1, y + 4) {
            for px in max(0, x - 4)...min(image.width - 1, x + 4) {
                let offset = (py * image.width + px) * image.bands
                for channel in 0..<3 { sums[channel] += Int(image.data[offset + min(channel, image.bands - 1)]) }
                count += 1
            }
        }
        return (sums[0] / count, sums[1] / count, sums[2] / count)
    }
}

/// Hand-made sources for the fault tests.
enum Craft {
    /// A JPEG whose stored pixels are 1600 × 1200, left half red and right
    /// half blue, tagged with an EXIF orientation.
    static func twoColourJPEG(orientation: Int) -> [UInt8] {
        precondition(LibVips.started)
        let (width, height) = (1600, 1200)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                pixels[(y * width + x) * 3 + (x < width / 2 ? 0 : 2)] = 255
            }
        }
        let encoded = pixels.withUnsafeBytes { raw in
            LibVips.withRGB(raw, width: width, height: height) { image -> [UInt8]? in
                image.setIntField("orientation", orientation)
                return image.save(.jpegKeepingMetadata(quality: 90))
            }
        }
        return (encoded ?? nil) ?? []
    }

    /// A valid-looking PNG header declaring `width` × `height` pixels (one-bit
    /// grey by default; `colourType` 2 is RGB), followed by one row of data: a
    /// decompression bomb of a few KB.
    static func bombPNG(
        width: UInt32 = 50_000, height: UInt32 = 50_000, bitDepth: UInt8 = 1, colourType: UInt8 = 0, interlaced: Bool = false
    ) -> [UInt8] {
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        // IHDR: width, height, bit depth, colour type, deflate, no filter, interlace (1: Adam7).
        png += chunk("IHDR", bigEndian(width) + bigEndian(height) + [bitDepth, colourType, 0, 0, interlaced ? 1 : 0])
        // One row (filter byte + width / 8 bytes) in a zlib stream of one stored block.
        let row = [UInt8](repeating: 0, count: 1 + Int((width + 7) / 8))
        let length = UInt16(row.count)
        var zlib: [UInt8] = [0x78, 0x01, 0x01]  // header, then a final stored block
        zlib += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
        zlib += row + bigEndian(adler32(row))
        png += chunk("IDAT", zlib)
        png += chunk("IEND", [])
        return png
    }

    /// A whole, valid PNG of `width` × `height` black pixels (`colourType` 0
    /// grey, 2 RGB; `bitDepth` 8 or 16), Adam7-interlaced when asked: a few
    /// hundred KB that decode to hundreds of MB. Compressed as it is made,
    /// a row at a time.
    static func blackPNG(width: Int, height: Int, bitDepth: UInt8 = 16, colourType: UInt8 = 2, interlaced: Bool) -> [UInt8] {
        let bytesPerPixel = (colourType == 2 ? 3 : 1) * Int(bitDepth) / 8
        // Adam7's passes (x, y, x step, y step); one pass of every pixel without interlacing.
        let passes = interlaced ? [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)] : [(0, 0, 1, 1)]
        var stream = z_stream()
        precondition(deflateInit_(&stream, 9, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK)
        defer { deflateEnd(&stream) }
        var compressed: [UInt8] = []
        var output = [UInt8](repeating: 0, count: 1 << 16)
        func feed(_ input: inout [UInt8], finish: Bool) {
            input.withUnsafeMutableBufferPointer { bytes in
                stream.next_in = bytes.baseAddress
                stream.avail_in = UInt32(bytes.count)
                repeat {
                    output.withUnsafeMutableBufferPointer { out in
                        stream.next_out = out.baseAddress
                        stream.avail_out = UInt32(out.count)
                        _ = deflate(&stream, finish ? Z_FINISH : Z_NO_FLUSH)
                        compressed += out[0..<(out.count - Int(stream.avail_out))]
                    }
                } while stream.avail_in > 0 || (finish && stream.avail_out == 0)
            }
        }
        for (x, y, xStep, yStep) in passes {
            let columns = (width - x + xStep - 1) / xStep
            let rows = (height - y + yStep - 1) / yStep
            guard columns > 0, rows > 0 else { continue }
            var row = [UInt8](repeating: 0, count: 1 + columns * bytesPerPixel)  // filter byte 0, black
            for _ in 0..<rows { feed(&row, finish: false) }
        }
        var nothing: [UInt8] = []
        feed(&nothing, finish: true)
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        png += chunk("IHDR", bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [bitDepth, colourType, 0, 0, interlaced ? 1 : 0])
        png += chunk("IDAT", compressed)
        png += chunk("IEND", [])
        return png
    }

    /// The start of a JPEG up to its frame header (SOF `marker`): `width` ×
    /// `height`, a component for each sampling byte (horizontal << 4 | vertical).
    static func jpegHeader(width: Int, height: Int, marker: UInt8, sampling: [UInt8]) -> [UInt8] {
        var jpeg: [UInt8] = [0xFF, 0xD8]
        // An APP0 segment first, as encoders write.
        jpeg += [0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
        let length = 8 + 3 * sampling.count
        jpeg += [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF), 8]
        jpeg += [UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF), UInt8(sampling.count)]
        for (index, factors) in sampling.enumerated() { jpeg += [UInt8(index + 1), factors, 0] }
        return jpeg + [0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00]
    }

    /// A generated picture of `width` × `height` in `encoding` (a progressive
    /// JPEG, an interlaced PNG, a GIF…), painted as the demo's originals are.
    static func painted(_ encoding: LibVips.Encoding, width: Int, height: Int, seed: UInt64 = 3) async throws -> [UInt8] {
        precondition(LibVips.started)
        let size = OriginalPainter.sketchSize(width: width, height: height)
        let painter = OriginalPainter(width: size.width, height: size.height, seed: seed)
        let grain = painter.grain
        let encoded: [UInt8]?? = painter.paint().withUnsafeBytes { raw in
            LibVips.withRGB(raw, width: size.width, height: size.height) { sketch -> [UInt8]? in
                let saved: [UInt8]?? = LibVips.withEnlarged(sketch, width: width, height: height, grain: grain.sigma, seed: grain.seed) { $0.save(encoding) }
                return saved ?? nil
            }
        }
        let bytes: [UInt8]? = encoded ?? nil
        return try #require(bytes)
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typed + bigEndian(crc32(typed))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    private static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var (a, b): (UInt32, UInt32) = (1, 0)
        for byte in bytes {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return b << 16 | a
    }

    /// Deterministic bytes that are no image.
    static func noise(count: Int, seed: UInt64) -> [UInt8] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }
}
