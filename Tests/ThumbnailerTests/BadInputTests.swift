import ImageFormats
import Testing

@testable import Thumbnailer

@Suite("Sources that must be refused")
struct BadInputTests {
    let thumbnailer = Thumbnailer(workers: 1)

    /// The error `thumbnail` throws for `source`, or nil when it made one.
    func refusal(of source: [UInt8], format: ImageFormat = .webp) async -> ThumbnailError? {
        do {
            _ = try await thumbnailer.thumbnail(of: source, width: 240, height: 180, format: format)
            return nil
        } catch {
            return error
        }
    }

    @Test("A 50,000 × 50,000 PNG of a few KB is refused from its header")
    func decompressionBomb() async throws {
        let bomb = Craft.bombPNG()
        #expect(bomb.count < 8 * 1024)
        #expect(try thumbnailer.info(of: bomb) == ImageInfo(width: 50_000, height: 50_000, format: "png"))
        #expect(await refusal(of: bomb) == .tooManyPixels(width: 50_000, height: 50_000))
        #expect(thumbnailer.stats.failed == 1)
    }

    @Test("The pixel limit is the one configured")
    func pixelLimit() async throws {
        let strict = Thumbnailer(workers: 1, limits: ThumbnailLimits(maxPixels: 1_000_000))
        let original = try await Fixtures.shared.original(.jpeg)
        await #expect(throws: ThumbnailError.tooManyPixels(width: 1600, height: 1200)) {
            try await strict.thumbnail(of: original, width: 240, height: 180, format: .jpeg)
        }
    }

    @Test("A source over the byte limit is refused")
    func tooLarge() async throws {
        let small = Thumbnailer(workers: 1, limits: ThumbnailLimits(maxSourceBytes: 10_000))
        let original = try await Fixtures.shared.original(.jpeg)
        await #expect(throws: ThumbnailError.tooLarge) {
            try await small.thumbnail(of: original, width: 240, height: 180, format: .jpeg)
        }
    }

    @Test(
        "A JPEG or PNG cut at 60% is refused as truncated, in both output formats",
        arguments: [OriginalFormat.jpeg, .png], ImageFormat.allCases)
    func truncated(source: OriginalFormat, output: ImageFormat) async throws {
        let original = try await Fixtures.shared.original(source)
        let cut = Array(original.prefix(original.count * 6 / 10))
        #expect(await refusal(of: cut, format: output) == .truncated)
    }

    @Test("A cut WebP is refused")
    func truncatedWebP() async throws {
        let original = try await Fixtures.shared.original(.webp)
        let cut = Array(original.prefix(original.count * 6 / 10))
        let error = await refusal(of: cut)
        #expect(error == .truncated || error == .notAnImage)
    }

    @Test("A JPEG cut inside its header is not an image")
    func cutInHeader() async throws {
        let original = try await Fixtures.shared.original(.jpeg)
        #expect(await refusal(of: Array(original.prefix(40))) == .notAnImage)
    }

    @Test("Bytes that are no image are refused", arguments: Junk.allCases)
    func notAnImage(junk: Junk) async throws {
        #expect(await refusal(of: junk.bytes) == .notAnImage)
        #expect(throws: ThumbnailError.notAnImage) { try thumbnailer.info(of: junk.bytes) }
    }

    @Test("A thumbnail size out of range is refused", arguments: [(0, 180), (240, -1), (5000, 100)])
    func badSize(width: Int, height: Int) async throws {
        let original = try await Fixtures.shared.original(.jpeg)
        await #expect {
            try await thumbnailer.thumbnail(of: original, width: width, height: height, format: .jpeg)
        } throws: { error in
            if case .failed = error as? ThumbnailError { return true }
            return false
        }
    }

    @Test("A refused source leaves the thumbnailer working")
    func recovers() async throws {
        let original = try await Fixtures.shared.original(.jpeg)
        _ = await refusal(of: Array(original.prefix(original.count / 2)))
        _ = await refusal(of: Craft.bombPNG())
        let thumbnail = try await thumbnailer.thumbnail(of: original, width: 240, height: 180, format: .jpeg)
        #expect(thumbnail.width == 240)
        #expect(thumbnailer.stats.made == 1 && thumbnailer.stats.failed == 2)
    }
}

/// Bodies an origin may send instead of an image.
enum Junk: String, CaseIterable, Sendable {
    case html, htmlWithInlineSVG, svg, pdf, empty, oneByte, random, json

    var bytes: [UInt8] {
        switch self {
        case .html: Array("<!doctype html><html><body><h1>Not found</h1></body></html>".utf8)
        case .htmlWithInlineSVG:
            Array(#"<html><body><svg width="10" height="10" xmlns="http://www.w3.org/2000/svg"><rect width="10" height="10"/></svg></body></html>"#.utf8)
        case .svg: Array(#"<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><circle r="40" cx="50" cy="50"/></svg>"#.utf8)
        case .pdf: Array("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n".utf8)
        case .empty: []
        case .oneByte: [0xFF]
        case .random: Craft.noise(count: 64 * 1024, seed: 3)
        case .json: Array(#"{"error":"rate limited"}"#.utf8)
        }
    }
}
