import Testing

@testable import Thumbnailer

@Suite("Generated originals")
struct OriginalTests {
    @Test("The same seed gives the same bytes; another seed, other bytes", arguments: OriginalFormat.allCases)
    func deterministic(format: OriginalFormat) async throws {
        let thumbnailer = Thumbnailer(workers: 2)
        async let first = thumbnailer.original(width: 1200, height: 900, seed: 42, format: format)
        async let second = thumbnailer.original(width: 1200, height: 900, seed: 42, format: format)
        let other = try await thumbnailer.original(width: 1200, height: 900, seed: 43, format: format)
        let (a, b) = try await (first, second)
        #expect(a == b)
        #expect(a != other)
    }

    @Test("Originals are at least a megapixel, in their format, and JPEGs weigh like photos")
    func shape() async throws {
        let thumbnailer = Thumbnailer(workers: 1)
        for format in OriginalFormat.allCases {
            let bytes = try await Fixtures.shared.original(format)
            #expect(try thumbnailer.info(of: bytes) == ImageInfo(width: 1600, height: 1200, format: format.rawValue))
            switch format {
            case .jpeg:
                #expect(Inspect.isJPEG(bytes))
                #expect((150_000...1_000_000).contains(bytes.count), "JPEG is \(bytes.count) bytes")
            case .png: #expect(Inspect.isPNG(bytes))
            case .webp: #expect(Inspect.isWebP(bytes))
            }
        }
    }

    @Test("Originals are visually varied: different seeds differ in colour, not only in grain")
    func varied() async throws {
        var means: [(Int, Int, Int)] = []
        for seed: UInt64 in 1...4 {
            let bytes = try await Fixtures.shared.original(.png, seed: seed)
            let image = try #require(Inspect.pixels(bytes))
            means.append(Inspect.colour(at: 800, 600, in: image))
        }
        let distinct = Set(means.map { "\($0.0 / 16)-\($0.1 / 16)-\($0.2 / 16)" })
        #expect(distinct.count >= 3)
    }

    @Test("A JPEG original can carry an EXIF orientation")
    func oriented() async throws {
        let thumbnailer = Thumbnailer(workers: 1)
        let turned = try await thumbnailer.original(width: 1600, height: 1200, seed: 9, format: .jpeg, orientation: 8)
        #expect(try thumbnailer.info(of: turned) == ImageInfo(width: 1200, height: 1600, format: "jpeg", orientation: 8))
        let upright = try await thumbnailer.original(width: 1600, height: 1200, seed: 9, format: .jpeg)
        #expect(Inspect.fields(["exif-data"], in: upright) == [])
        let thumbnail = try await thumbnailer.thumbnail(of: turned, width: 180, height: 240, format: .jpeg)
        #expect(Inspect.fields(["exif-data", "orientation"], in: thumbnail.bytes) == [])
    }

    @Test("A size over the pixel limit is refused")
    func overLimit() async {
        let thumbnailer = Thumbnailer(workers: 1, limits: ThumbnailLimits(maxPixels: 100))
        await #expect {
            try await thumbnailer.original(width: 20, height: 20, seed: 1, format: .png)
        } throws: { error in
            if case .failed = error as? ThumbnailError { return true }
            return false
        }
    }
}
