import ImageFormats
import Testing

@testable import Thumbnailer

@Suite("What a decode holds, from the header")
struct DecodeCostTests {
    /// The facts of `bytes`, read as the thumbnailer reads them.
    func facts(_ bytes: [UInt8]) throws -> SourceFacts {
        try bytes.withUnsafeBytes { SourceHeader.facts(of: $0) }.get()
    }

    @Test("A progressive JPEG's coefficients: 3 bytes a pixel in 4:2:0, 6 in 4:4:4; a baseline one holds none")
    func jpegFrames() throws {
        func frame(_ marker: UInt8, _ sampling: [UInt8]) -> JPEGFrame? {
            let header = Craft.jpegHeader(width: 8000, height: 6000, marker: marker, sampling: sampling)
            return header.withUnsafeBytes { JPEGFrame.read($0) }
        }
        let subsampled = try #require(frame(0xC2, [0x22, 0x11, 0x11]))
        #expect(subsampled.progressive && subsampled.width == 8000 && subsampled.height == 6000)
        #expect(subsampled.coefficientBytes == 144_000_000)
        let full = try #require(frame(0xC2, [0x11, 0x11, 0x11]))
        #expect(full.coefficientBytes == 288_000_000)
        let baseline = try #require(frame(0xC0, [0x22, 0x11, 0x11]))
        #expect(!baseline.progressive)
        let scanFirst: [UInt8] = [0xFF, 0xD8, 0xFF, 0xDA, 0, 2]
        #expect(scanFirst.withUnsafeBytes { JPEGFrame.read($0) } == nil, "a scan before any frame")
        let cut = Array(Craft.jpegHeader(width: 8, height: 8, marker: 0xC2, sampling: [0x11]).prefix(12))
        #expect(cut.withUnsafeBytes { JPEGFrame.read($0) } == nil)
    }

    @Test("A 48-megapixel 16-bit Adam7 PNG of a few KB is costed whole, and refused by the default budget before decoding")
    func interlacedPNGBomb() async throws {
        let bomb = Craft.bombPNG(width: 8000, height: 6000, bitDepth: 16, colourType: 2, interlaced: true)
        #expect(bomb.count < 8 * 1024)
        let read = try facts(bomb)
        #expect(read.bands == 3 && read.sampleBytes == 2 && read.interlaced)
        #expect(DecodeCost.wholeImage(read) == 288_000_000)
        let plain = try facts(Craft.bombPNG(width: 8000, height: 6000, bitDepth: 16, colourType: 2, interlaced: false))
        #expect(DecodeCost.wholeImage(plain) == 0)
        // Streamed: 8000 columns of strips, about 44 MB; what it took, measured: 33 MB.
        #expect(DecodeCost.bytes(of: plain, width: 320, height: 240, format: .webp) < 48 << 20)
        let thumbnailer = Thumbnailer(workers: 1, decodeBudget: DecodeBudget(bytes: 128 << 20))
        let cost = DecodeCost.bytes(of: read, width: 320, height: 240, format: .webp)
        await #expect(throws: ThumbnailError.overDecodeBudget(bytes: cost)) {
            try await thumbnailer.thumbnail(of: bomb, width: 320, height: 240, format: .webp)
        }
        #expect(thumbnailer.decodeBudget.stats.refused == 1)
        #expect(thumbnailer.decodeBudget.stats.admitted == 0)
    }

    @Test("Each format's whole-image decoders are counted whole, the others by their rows")
    func formats() async throws {
        let progressive = try facts(try await Craft.painted(.progressiveJPEG(quality: 80), width: 2000, height: 1500))
        #expect(progressive.jpegFrame?.progressive == true && progressive.interlaced)
        // libvips writes 4:2:0 below quality 90: 125 × 94 MCUs of six blocks.
        #expect(DecodeCost.wholeImage(progressive) == 125 * 94 * 6 * 128)
        let baseline = try facts(try await Craft.painted(.jpeg(quality: 80), width: 2000, height: 1500))
        #expect(baseline.jpegFrame?.progressive == false && DecodeCost.wholeImage(baseline) == 0)
        // Shrunk by 4 while it loads for a 240 × 180 box (8.3 times smaller): 500 columns.
        #expect(DecodeCost.shrinkOnLoad(baseline, width: 240, height: 180) == 4)
        #expect(DecodeCost.bytes(of: baseline, width: 240, height: 180, format: .webp) == DecodeCost.perJob + 500 * DecodeCost.perColumn + 240 * 180 * 32)
        let png = try facts(try await Craft.painted(.interlacedPNG(bitDepth: 8), width: 2000, height: 1500))
        #expect(DecodeCost.wholeImage(png) == 2000 * 1500 * 3)
        let gif = try facts(try await Craft.painted(.gif, width: 2000, height: 1500))
        #expect(gif.info.format == "gif" && DecodeCost.wholeImage(gif) == 2000 * 1500 * 8)
        let webp = try facts(try await Craft.painted(.webp(quality: 80), width: 2000, height: 1500))
        #expect(webp.webp == .lossy && DecodeCost.wholeImage(webp) == 0)
        #expect(DecodeCost.bytes(of: webp, width: 240, height: 180, format: .avif) > DecodeCost.bytes(of: webp, width: 240, height: 180, format: .webp))
    }

    @Test("A WebP's coding, from its chunks")
    func webpCoding() {
        func riff(_ chunks: [(String, [UInt8])]) -> [UInt8] {
            var body = Array("WEBP".utf8)
            for (type, data) in chunks { body += Array(type.utf8) + [UInt8(data.count), 0, 0, 0] + data + (data.count & 1 == 1 ? [0] : []) }
            return Array("RIFF".utf8) + [UInt8(body.count & 0xFF), UInt8(body.count >> 8), 0, 0] + body
        }
        func coding(_ bytes: [UInt8]) -> SourceFacts.WebPCoding { bytes.withUnsafeBytes { SourceFacts.webpCoding(of: $0) } }
        #expect(coding(riff([("VP8 ", [1, 2, 3])])) == .lossy)
        #expect(coding(riff([("VP8L", [1, 2, 3])])) == .lossless)
        #expect(coding(riff([("VP8X", [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]), ("ICCP", [9]), ("VP8 ", [1])])) == .lossy)
        #expect(coding(riff([("VP8X", [0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0]), ("ANIM", [0, 0, 0, 0, 0, 0])])) == .animated)
        #expect(coding(riff([("VP8X", [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]), ("VP8L", [1])])) == .lossless)
    }
}

@Suite("The decode budget around the thumbnailer")
struct DecodeBudgetTests {
    @Test("A source whose decode is over the whole budget is refused; one that fits is made")
    func overBudget() async throws {
        let budget = DecodeBudget(bytes: 12 << 20)
        let thumbnailer = Thumbnailer(workers: 1, decodeBudget: budget)
        let progressive = try await Craft.painted(.progressiveJPEG(quality: 80), width: 2000, height: 1500)
        let baseline = try await Craft.painted(.jpeg(quality: 80), width: 2000, height: 1500)
        await #expect {
            try await thumbnailer.thumbnail(of: progressive, width: 240, height: 180, format: .webp)
        } throws: { error in
            guard case ThumbnailError.overDecodeBudget(let bytes) = error else { return false }
            return bytes > 12 << 20
        }
        let made = try await thumbnailer.thumbnail(of: baseline, width: 240, height: 180, format: .webp)
        #expect(made.width == 240 && made.height == 180)
        let stats = budget.stats
        #expect(stats.refused == 1 && stats.admitted == 1 && stats.inUseBytes == 0 && stats.budgetBytes == 12 << 20)
        #expect(thumbnailer.stats.failed == 1 && thumbnailer.stats.made == 1)
    }

    @Test("Jobs wait for room: the decodes running never hold more than the budget")
    func waitForRoom() async throws {
        let original = try await Fixtures.shared.original(.jpeg)
        let cost = try original.withUnsafeBytes { try SourceHeader.facts(of: $0).get() }
        let one = DecodeCost.bytes(of: cost, width: 240, height: 180, format: .webp)
        // Room for one job at a time, on two workers.
        let budget = DecodeBudget(bytes: one * 3 / 2)
        let thumbnailer = Thumbnailer(workers: 2, decodeBudget: budget)
        let made = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask { try await thumbnailer.thumbnail(of: original, width: 240, height: 180, format: .webp).width }
            }
            return try await group.reduce(0) { $0 + ($1 == 240 ? 1 : 0) }
        }
        #expect(made == 8)
        let stats = budget.stats
        #expect(stats.admitted == 8 && stats.peakBytes == one && stats.inUseBytes == 0 && stats.waiting == 0)
        #expect(stats.waited >= 1, "eight jobs asked at once, on two workers, for room for one")
    }

    @Test("A lower budget refuses the jobs waiting over it")
    func lowered() async throws {
        let original = try await Fixtures.shared.original(.jpeg)
        let budget = DecodeBudget(bytes: 1 << 30)
        budget.setBytes(1 << 20)
        let thumbnailer = Thumbnailer(workers: 1, decodeBudget: budget)
        await #expect {
            try await thumbnailer.thumbnail(of: original, width: 240, height: 180, format: .webp)
        } throws: { error in
            if case ThumbnailError.overDecodeBudget = error { return true }
            return false
        }
        #expect(budget.stats.budgetBytes == 1 << 20)
    }

    @Test("libvips work whose deadline has passed is stopped at its first strip, and counted")
    func deadlinePassed() async throws {
        let original = try await Fixtures.shared.original(.jpeg)
        let budget = DecodeBudget(bytes: 128 << 20)
        let hasty = Thumbnailer(workers: 1, limits: ThumbnailLimits(maxWorkTime: .zero), decodeBudget: budget)
        await #expect(throws: ThumbnailError.timedOut) {
            try await hasty.thumbnail(of: original, width: 240, height: 180, format: .webp)
        }
        #expect(budget.stats.timedOut == 1 && budget.stats.inUseBytes == 0)
        // The same source within the default deadline.
        let patient = Thumbnailer(workers: 1, decodeBudget: budget)
        #expect(try await patient.thumbnail(of: original, width: 240, height: 180, format: .webp).width == 240)
    }

    @Test("A 48-megapixel decode is stopped when its deadline passes while it runs")
    func deadlineWhileRunning() async throws {
        // 288 MB of 16-bit pixels inflated a row at a time: far longer than the deadline.
        let large = Craft.blackPNG(width: 8000, height: 6000, interlaced: false)
        #expect(large.count < 1 << 20)
        let budget = DecodeBudget(bytes: 128 << 20)
        let hasty = Thumbnailer(workers: 1, limits: ThumbnailLimits(maxWorkTime: .milliseconds(20)), decodeBudget: budget)
        await #expect(throws: ThumbnailError.timedOut) {
            try await hasty.thumbnail(of: large, width: 320, height: 240, format: .webp)
        }
        #expect(budget.stats.timedOut == 1)
    }
}
