import ImageFormats
import Testing

@testable import Thumbnailer

@Suite("A thumbnail's two-colour preview")
struct PreviewTests {
    @Test("Made with the thumbnail: the top half's colour, then the bottom half's", arguments: ImageFormat.allCases)
    func madeWithTheThumbnail(output: ImageFormat) async throws {
        // Shown red on top, blue below (orientation 6 turns the stored red left half up).
        let source = Craft.twoColourJPEG(orientation: 6)
        let thumbnail = try await Thumbnailer(workers: 1).thumbnail(of: source, width: 180, height: 240, format: output)
        guard output != .avif else {
            // An item's preview comes with its WebP or JPEG: decoding an AVIF back would cost more.
            #expect(thumbnail.preview == nil)
            return
        }
        let preview = try #require(thumbnail.preview)
        #expect(preview.top.0 > 200 && preview.top.2 < 60, "top should be red, is \(preview.top)")
        #expect(preview.bottom.2 > 200 && preview.bottom.0 < 60, "bottom should be blue, is \(preview.bottom)")
    }

    @Test("Means of each half, for grey, RGB and RGBA pixels; packed in 48 bits")
    func means() throws {
        // 2 × 2 RGB: top row (10,20,30) and (30,40,50); bottom row (200,0,0) twice.
        let rgb: [UInt8] = [10, 20, 30, 30, 40, 50, 200, 0, 0, 200, 0, 0]
        let preview = try #require(ThumbnailPreview(pixels: rgb, width: 2, height: 2, bands: 3))
        #expect(preview.top == (20, 30, 40) && preview.bottom == (200, 0, 0))
        #expect(preview.packed == 0x14_1E28_C8_0000)
        #expect(ThumbnailPreview(packed: preview.packed) == preview)
        let grey = try #require(ThumbnailPreview(pixels: [100, 200], width: 1, height: 2, bands: 1))
        #expect(grey.top == (100, 100, 100) && grey.bottom == (200, 200, 200))
        let rgba = try #require(ThumbnailPreview(pixels: [1, 2, 3, 0, 4, 5, 6, 255], width: 1, height: 2, bands: 4))
        #expect(rgba.top == (1, 2, 3) && rgba.bottom == (4, 5, 6))
        #expect(ThumbnailPreview(pixels: [1, 2], width: 1, height: 2, bands: 3) == nil, "too few bytes")
        #expect(ThumbnailPreview(pixels: [], width: 0, height: 0, bands: 3) == nil)
    }
}
