import ImageFormats
import Testing

@testable import Thumbnailer

@Suite("AVIF's quality, chosen picture by picture to match the WebP's SSIM")
struct AVIFQualityTests {
    /// Two 16 × 12 RGB images made by formula, the second a shaken copy of
    /// the first; the figure is scikit-image 0.x's
    /// `structural_similarity(a, b, channel_axis=2, data_range=255)` on them
    /// (the script is in the commit that added this test).
    @Test("SSIM agrees with scikit-image's structural_similarity")
    func ssimAgreesWithScikitImage() throws {
        let count = 16 * 12 * 3
        let a = (0..<count).map { (i: Int) -> UInt8 in UInt8((i * 37 + (i / 7) * 11) % 256) }
        let b = (0..<count).map { (i: Int) -> UInt8 in Self.clamped(Int(a[i]) + (i * 13) % 21 - 10) }
        let ssim = try #require(SSIM.of(a, b, width: 16, height: 12, bands: 3))
        #expect(abs(ssim - 0.9967669737763568) < 1e-12)
        #expect(SSIM.of(a, a, width: 16, height: 12, bands: 3) == 1)
    }

    @Test("SSIM leaves an alpha band out, as the benchmark does")
    func ssimLeavesAlphaOut() throws {
        let (width, height) = (16, 12)
        let a = (0..<(width * height * 4)).map { (i: Int) -> UInt8 in UInt8((i * 29 + (i / 5) * 7) % 256) }
        var b = a
        var shaken = 0
        for i in b.indices {
            if i % 4 == 3 {
                b[i] = 0
            } else {
                b[i] = Self.clamped(Int(a[i]) + shaken % 9 - 4)
                shaken += 1
            }
        }
        let ssim = try #require(SSIM.of(a, b, width: width, height: height, bands: 4))
        #expect(abs(ssim - 0.9994384479134494) < 1e-12)
    }

    static func clamped(_ value: Int) -> UInt8 {
        UInt8(min(255, max(0, value)))
    }

    @Test("SSIM refuses images of different sizes or smaller than its window")
    func ssimRefusesMismatches() {
        let a = [UInt8](repeating: 9, count: 8 * 8 * 3)
        #expect(SSIM.of(a, Array(a.dropLast(3)), width: 8, height: 8, bands: 3) == nil)
        #expect(SSIM.of(Array(a.prefix(6 * 8 * 3)), Array(a.prefix(6 * 8 * 3)), width: 6, height: 8, bands: 3) == nil)
    }

    @Test("The search finds the lowest quality reaching the target in a few tries")
    func searchFindsTheLowest() {
        let ladder = QualitySearch.avifLadder
        for target in [0.5, 0.8, 0.9, 0.95] {
            var tried: [Int] = []
            // SSIM rising with quality, as it does.
            let ssim = { (quality: Int) -> Double in 1 - 10 / Double(quality + 10) }
            let chosen = QualitySearch.lowest(on: ladder, reaching: target) { quality in
                tried.append(quality)
                return ssim(quality)
            }
            let expected = ladder.first { ssim($0) >= target } ?? ladder.last
            #expect(chosen == expected, "target \(target)")
            #expect(tried.count <= 5, "tried \(tried)")
        }
        #expect(QualitySearch.lowest(on: ladder, reaching: 2) { _ in 0.99 } == ladder.last)
        #expect(QualitySearch.lowest(on: ladder, reaching: 0.5) { _ in nil } == nil)
    }

    @Test("In a hurry, the search ends at the first quality that reaches the target")
    func hurriedSearchEndsAtTheFirstReaching() {
        let ladder = QualitySearch.avifLadder
        let ssim = { (quality: Int) -> Double in Double(quality) / 100 }
        var tried: [Int] = []
        var asked = 0
        // 0.5 is reached from 50: the first try (the middle, 42) falls short, the next (54) reaches.
        let chosen = QualitySearch.lowest(
            on: ladder, reaching: 0.5,
            hurry: {
                asked += 1
                return true
            }
        ) { quality in
            tried.append(quality)
            return ssim(quality)
        }
        #expect(tried == [42, 54])
        #expect(chosen == 54 && asked == 1)
        // Not in a hurry, the same search goes on to the lowest.
        #expect(QualitySearch.lowest(on: ladder, reaching: 0.5, ssim: ssim) == 50)
    }

    @Test("A thumbnail's AVIF is the lowest quality on the ladder whose SSIM reaches its WebP's")
    func avifMatchesItsWebP() async throws {
        let thumbnailer = Thumbnailer(workers: 2)
        let (width, height) = (320, 240)
        let original = try await Fixtures.shared.original(.jpeg)
        let reference = try #require(
            original.withUnsafeBytes { bytes in
                LibVips.withThumbnail(of: bytes, width: width, height: height, crop: ThumbnailJob.crop, failOn: .error) {
                    $0.pixels()
                }
            } ?? nil)
        func ssim(_ thumbnail: Thumbnail) throws -> Double {
            let decoded = try #require(Inspect.pixels(thumbnail.bytes))
            return try #require(SSIM.of(reference, decoded.data, width: width, height: height, bands: decoded.bands))
        }
        let webp = try await thumbnailer.thumbnail(of: original, width: width, height: height, format: .webp)
        let avif = try await thumbnailer.thumbnail(of: original, width: width, height: height, format: .avif)
        let target = try ssim(webp)
        #expect(try ssim(avif) >= target)

        // Which quality it was made at: the encoder gives the same bytes for the same pixels.
        var chosen: Int?
        var below: Thumbnail?
        for quality in QualitySearch.avifLadder {
            let fixed = try await thumbnailer.thumbnail(of: original, width: width, height: height, format: .avif, quality: quality)
            if fixed.bytes == avif.bytes {
                chosen = quality
                break
            }
            below = fixed
        }
        let quality = try #require(chosen, "the AVIF matches no quality on the ladder")
        if let below, quality != QualitySearch.avifLadder.first {
            #expect(try ssim(below) < target, "a lower quality, \(quality - 2), already reached the WebP's SSIM")
        }
    }

    @Test("Too small to measure, an AVIF is made at AVIF's fixed quality")
    func tooSmallToMeasure() async throws {
        let thumbnailer = Thumbnailer(workers: 1)
        let original = try await Fixtures.shared.original(.jpeg)
        let matched = try await thumbnailer.thumbnail(of: original, width: 6, height: 4, format: .avif)
        let fixed = try await thumbnailer.thumbnail(
            of: original, width: 6, height: 4, format: .avif, quality: ImageFormat.avif.thumbnailQuality)
        #expect(matched.bytes == fixed.bytes)
    }
}
