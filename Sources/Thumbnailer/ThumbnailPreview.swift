/// Two colours of a thumbnail, the mean of its top half and of its bottom
/// half: enough for a page to paint a box in the picture's colours (a
/// vertical gradient, sky over ground) before the thumbnail arrives, in a few
/// bytes kept with the item.
public struct ThumbnailPreview: Sendable, Hashable {
    /// 0xRRGGBB of the top half, then 0xRRGGBB of the bottom half, in 48 bits.
    public var packed: Int64

    public init(packed: Int64) { self.packed = packed & 0xFFFF_FFFF_FFFF }

    public init(top: (UInt8, UInt8, UInt8), bottom: (UInt8, UInt8, UInt8)) {
        func rgb(_ c: (UInt8, UInt8, UInt8)) -> Int64 { Int64(c.0) << 16 | Int64(c.1) << 8 | Int64(c.2) }
        packed = rgb(top) << 24 | rgb(bottom)
    }

    public var top: (UInt8, UInt8, UInt8) { Self.colour(packed >> 24) }
    public var bottom: (UInt8, UInt8, UInt8) { Self.colour(packed) }

    private static func colour(_ bits: Int64) -> (UInt8, UInt8, UInt8) {
        (UInt8(truncatingIfNeeded: bits >> 16), UInt8(truncatingIfNeeded: bits >> 8), UInt8(truncatingIfNeeded: bits))
    }

    /// The preview of 8-bit interleaved pixels (`bands` per pixel: grey, grey
    /// and alpha, RGB or RGBA; alpha is ignored); nil for an empty image or
    /// another layout.
    public init?(pixels: [UInt8], width: Int, height: Int, bands: Int) {
        guard width > 0, height > 0, (1...4).contains(bands), pixels.count >= width * height * bands else { return nil }
        let colourBands = bands >= 3 ? 3 : 1
        func mean(rows: Range<Int>) -> (UInt8, UInt8, UInt8) {
            var sums = [0, 0, 0]
            for y in rows {
                for x in 0..<width {
                    let offset = (y * width + x) * bands
                    for channel in 0..<3 { sums[channel] += Int(pixels[offset + (colourBands == 3 ? channel : 0)]) }
                }
            }
            let count = max(1, rows.count * width)
            return (UInt8(sums[0] / count), UInt8(sums[1] / count), UInt8(sums[2] / count))
        }
        let half = max(1, height / 2)
        self.init(top: mean(rows: 0..<half), bottom: mean(rows: (height > 1 ? half : 0)..<height))
    }
}
