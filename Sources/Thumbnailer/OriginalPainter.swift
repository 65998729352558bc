import Foundation

/// Paints the sketch of a generated original: a two-colour gradient and a few
/// overlapping shapes, all chosen by a seed, at a quarter of the final size.
///
/// libvips then enlarges the sketch (which softens the edges, like a photo's
/// depth of field) and adds grain. The grain matters: without it a JPEG of
/// flat shapes is a few tens of kilobytes, far smaller than a real photo, and
/// the origin, fetcher and decoder would be tested on unrealistic sizes.
/// The same seed and size always give the same pixels (integer arithmetic and
/// IEEE operations in a fixed order).
struct OriginalPainter {
    /// How much smaller than the original the sketch is, on each side.
    static let reduction = 4

    var width: Int
    var height: Int
    var seed: UInt64

    /// The sketch's size for an original of `width` × `height`.
    static func sketchSize(width: Int, height: Int) -> (width: Int, height: Int) {
        (max(1, (width + reduction - 1) / reduction), max(1, (height + reduction - 1) / reduction))
    }

    /// The grain's standard deviation and seed for the final image.
    var grain: (sigma: Double, seed: Int32) {
        var random = SeededRandom(seed: seed ^ 0x6772_6169_6E00)  // "grain"
        let bits = random.next()
        return (Double(4 + bits % 6), Int32(truncatingIfNeeded: bits >> 32))
    }

    /// Interleaved 8-bit RGB, `width × height × 3` bytes.
    func paint() -> [UInt8] {
        var random = SeededRandom(seed: seed)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        pixels.withUnsafeMutableBufferPointer { canvas in
            paintGradient(canvas, &random)
            for _ in 0..<(5 + Int(random.next() % 6)) {
                paintShape(canvas, &random)
            }
        }
        return pixels
    }

    private func paintGradient(_ canvas: UnsafeMutableBufferPointer<UInt8>, _ random: inout SeededRandom) {
        let from = random.colour()
        let to = random.colour()
        let angle = Double(random.next() % 360) * .pi / 180
        let (dx, dy) = (cos(angle), sin(angle))
        // Project every corner on the direction to spread the gradient over the whole image.
        let corners = [0.0, dx * Double(width), dy * Double(height), dx * Double(width) + dy * Double(height)]
        let low = corners.min()!
        let span = max(corners.max()! - low, 1)
        for y in 0..<height {
            for x in 0..<width {
                let t = (dx * Double(x) + dy * Double(y) - low) / span
                let offset = (y * width + x) * 3
                for channel in 0..<3 {
                    let value = Double(from[channel]) + (Double(to[channel]) - Double(from[channel])) * t
                    canvas[offset + channel] = UInt8(clamping: Int(value))
                }
            }
        }
    }

    private func paintShape(_ canvas: UnsafeMutableBufferPointer<UInt8>, _ random: inout SeededRandom) {
        let colour = random.colour()
        let opacity = 96 + Int(random.next() % 144)  // out of 256
        let side = min(width, height)
        let centreX = Int(random.next() % UInt64(width))
        let centreY = Int(random.next() % UInt64(height))
        let radius = max(1, side / 16 + Int(random.next() % UInt64(max(1, side / 3))))
        let kind = random.next() % 4
        let stripe = max(2, radius / 6)
        for y in max(0, centreY - radius)..<min(height, centreY + radius) {
            for x in max(0, centreX - radius)..<min(width, centreX + radius) {
                let (ox, oy) = (x - centreX, y - centreY)
                let distance = ox * ox + oy * oy
                let inside =
                    switch kind {
                    case 0: distance <= radius * radius  // disc
                    case 1: distance <= radius * radius && distance >= radius * radius / 2  // ring
                    case 2: true  // square
                    default: ((x + y) / stripe) % 2 == 0  // diagonal stripes
                    }
                guard inside else { continue }
                let offset = (y * width + x) * 3
                for channel in 0..<3 {
                    let old = Int(canvas[offset + channel])
                    canvas[offset + channel] = UInt8((old * (256 - opacity) + Int(colour[channel]) * opacity) >> 8)
                }
            }
        }
    }
}

/// SplitMix64: tiny, fast, and the same sequence on every platform.
struct SeededRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// An RGB colour.
    mutating func colour() -> [UInt8] {
        let bits = next()
        return [UInt8(truncatingIfNeeded: bits), UInt8(truncatingIfNeeded: bits >> 8), UInt8(truncatingIfNeeded: bits >> 16)]
    }
}
