/// A JPEG's frame header (its SOF segment): size, coding and components, read
/// from the bytes without libjpeg, to cost a progressive decode.
struct JPEGFrame: Sendable, Equatable {
    /// One component's sampling factors (1 to 4 each).
    struct Sampling: Sendable, Equatable {
        var horizontal: Int
        var vertical: Int
    }

    var width: Int
    var height: Int
    /// Progressive (SOF2, SOF6, SOF10, SOF14): libjpeg keeps every DCT
    /// coefficient of the image until the last scan.
    var progressive: Bool
    var components: [Sampling]

    /// The bytes libjpeg's coefficient buffer takes for a progressive decode:
    /// each component's 8 × 8 blocks, rounded up to whole MCUs, at 64
    /// coefficients of 2 bytes a block; the same at any scale it decodes to.
    /// For 4:2:0 colour that is 3 bytes a pixel, for 4:4:4 6.
    var coefficientBytes: Int {
        let maxH = components.map(\.horizontal).max() ?? 1
        let maxV = components.map(\.vertical).max() ?? 1
        let mcuColumns = (width + 8 * maxH - 1) / (8 * maxH)
        let mcuRows = (height + 8 * maxV - 1) / (8 * maxV)
        return components.reduce(0) { $0 + mcuColumns * $1.horizontal * mcuRows * $1.vertical * 128 }
    }

    /// The frame header of the JPEG `bytes`, or nil when none comes before
    /// the first scan, the bytes end first, or it is malformed.
    static func read(_ bytes: UnsafeRawBufferPointer) -> JPEGFrame? {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var offset = 2
        while offset + 4 <= bytes.count {
            guard bytes[offset] == 0xFF else { return nil }
            let marker = bytes[offset + 1]
            if marker == 0xFF {  // fill byte
                offset += 1
                continue
            }
            if marker == 0x01 || (0xD0...0xD8).contains(marker) {  // markers without a length
                offset += 2
                continue
            }
            // The end of the image, or a scan, before any frame header.
            if marker == 0xD9 || marker == 0xDA { return nil }
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length >= 2, offset + 2 + length <= bytes.count else { return nil }
            if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC {
                return frame(bytes, at: offset + 4, length: length - 2, marker: marker)
            }
            offset += 2 + length
        }
        return nil
    }

    /// The frame header whose fields start at `start`.
    private static func frame(_ bytes: UnsafeRawBufferPointer, at start: Int, length: Int, marker: UInt8) -> JPEGFrame? {
        guard length >= 6 else { return nil }
        let height = Int(bytes[start + 1]) << 8 | Int(bytes[start + 2])
        let width = Int(bytes[start + 3]) << 8 | Int(bytes[start + 4])
        let count = Int(bytes[start + 5])
        guard count >= 1, length >= 6 + 3 * count else { return nil }
        var components: [Sampling] = []
        for index in 0..<count {
            let factors = bytes[start + 6 + 3 * index + 1]
            let sampling = Sampling(horizontal: Int(factors >> 4), vertical: Int(factors & 0x0F))
            guard (1...4).contains(sampling.horizontal), (1...4).contains(sampling.vertical) else { return nil }
            components.append(sampling)
        }
        return JPEGFrame(width: width, height: height, progressive: [0xC2, 0xC6, 0xCA, 0xCE].contains(marker), components: components)
    }
}
