import ImageFormats
import Testing

@testable import Thumbnailer

@Suite("Thumbnails of generated originals")
struct ThumbnailTests {
    static let sizes = [(240, 180), (480, 360)]

    @Test(
        "Every source format makes thumbnails of the size and format asked for",
        arguments: OriginalFormat.allCases, ImageFormat.allCases)
    func sizeAndFormat(source: OriginalFormat, output: ImageFormat) async throws {
        let thumbnailer = Thumbnailer(workers: 2)
        let original = try await Fixtures.shared.original(source)
        #expect(try thumbnailer.info(of: original) == ImageInfo(width: 1600, height: 1200, format: source.rawValue))

        for (width, height) in Self.sizes {
            let thumbnail = try await thumbnailer.thumbnail(of: original, width: width, height: height, format: output)
            #expect(thumbnail.width == width && thumbnail.height == height && thumbnail.format == output)
            switch output {
            case .webp: #expect(Inspect.isWebP(thumbnail.bytes))
            case .jpeg: #expect(Inspect.isJPEG(thumbnail.bytes))
            case .avif: #expect(Inspect.isAVIF(thumbnail.bytes))
            }
            if output == .avif {
                // AVIF is made, never taken as an original: libvips reads it back here.
                let pixels = try #require(Inspect.pixels(thumbnail.bytes))
                #expect(pixels.width == width && pixels.height == height)
            } else {
                let info = try thumbnailer.info(of: thumbnail.bytes)
                #expect(info == ImageInfo(width: width, height: height, format: output.rawValue))
            }
            #expect(thumbnail.bytes.count < original.count / 4)
        }
        #expect(thumbnailer.stats.made == 2)
        #expect(thumbnailer.stats.failed == 0)
    }

    @Test("A box of another shape is filled and cropped, not letterboxed")
    func cropToFill() async throws {
        let thumbnailer = Thumbnailer(workers: 1)
        let original = try await Fixtures.shared.original(.jpeg)
        let square = try await thumbnailer.thumbnail(of: original, width: 300, height: 300, format: .webp)
        #expect(try thumbnailer.info(of: square.bytes) == ImageInfo(width: 300, height: 300, format: "webp"))
        let tall = try await thumbnailer.thumbnail(of: original, width: 120, height: 400, format: .jpeg)
        #expect(try thumbnailer.info(of: tall.bytes) == ImageInfo(width: 120, height: 400, format: "jpeg"))
    }

    @Test("The EXIF orientation is applied and the metadata stripped", arguments: ImageFormat.allCases)
    func orientation(output: ImageFormat) async throws {
        let thumbnailer = Thumbnailer(workers: 1)
        // Stored 1600 × 1200, left half red; orientation 6 shows it turned a
        // quarter clockwise: 1200 × 1600, red on top.
        let source = Craft.twoColourJPEG(orientation: 6)
        #expect(Inspect.fields(["exif-data", "orientation"], in: source) == ["exif-data", "orientation"])
        #expect(try thumbnailer.info(of: source) == ImageInfo(width: 1200, height: 1600, format: "jpeg", orientation: 6))

        let thumbnail = try await thumbnailer.thumbnail(of: source, width: 180, height: 240, format: output)
        let image = try #require(Inspect.pixels(thumbnail.bytes))
        #expect(image.width == 180 && image.height == 240)
        let top = Inspect.colour(at: 90, 30, in: image)
        let bottom = Inspect.colour(at: 90, 210, in: image)
        #expect(top.red > 200 && top.blue < 60, "top should be red, is \(top)")
        #expect(bottom.blue > 200 && bottom.red < 60, "bottom should be blue, is \(bottom)")

        let metadata = ["exif-data", "xmp-data", "iptc-data", "icc-profile-data", "orientation"]
        #expect(Inspect.fields(metadata, in: thumbnail.bytes) == [])
        if output == .webp {
            // The simple layout: one lossy image chunk, nothing else.
            #expect(Array(thumbnail.bytes[12..<16]) == Array("VP8 ".utf8))
        }
        if output != .avif { #expect(try thumbnailer.info(of: thumbnail.bytes).orientation == 1) }
    }

    @Test("A source smaller than the box is enlarged to fill it")
    func smallSource() async throws {
        let thumbnailer = Thumbnailer(workers: 1)
        let small = try await thumbnailer.original(width: 100, height: 80, seed: 5, format: .png)
        let thumbnail = try await thumbnailer.thumbnail(of: small, width: 480, height: 360, format: .webp)
        #expect(try thumbnailer.info(of: thumbnail.bytes) == ImageInfo(width: 480, height: 360, format: "webp"))
    }

    @Test("Quality changes the size of the output")
    func quality() async throws {
        let thumbnailer = Thumbnailer(workers: 1)
        let original = try await Fixtures.shared.original(.png)
        let low = try await thumbnailer.thumbnail(of: original, width: 480, height: 360, format: .jpeg, quality: 30)
        let high = try await thumbnailer.thumbnail(of: original, width: 480, height: 360, format: .jpeg, quality: 95)
        #expect(low.bytes.count < high.bytes.count)
    }

    @Test("The same source and options make the same bytes")
    func repeatable() async throws {
        let thumbnailer = Thumbnailer(workers: 2)
        let original = try await Fixtures.shared.original(.webp)
        async let first = thumbnailer.thumbnail(of: original, width: 240, height: 180, format: .webp)
        async let second = thumbnailer.thumbnail(of: original, width: 240, height: 180, format: .webp)
        #expect(try await first == second)
    }
}
