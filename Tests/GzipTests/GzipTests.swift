import CZlib
import Gzip
import Testing

@Suite struct GzipTests {
    /// A gzip member (RFC 1952): magic, deflate, and a trailer with the CRC-32
    /// and length of the original, so the output is checked without inflating.
    @Test(arguments: [0, 1, 5000])
    func writesAGzipMemberOfTheInput(repeats: Int) {
        let input = Array(String(repeating: "<li>an item of the feed</li>\n", count: repeats).utf8)
        let packed = Gzip.compress(input)
        #expect(Array(packed.prefix(3)) == [0x1f, 0x8b, 0x08])
        let trailer = packed.suffix(8).map(UInt32.init)
        let crc = trailer[0..<4].reversed().reduce(UInt32(0)) { $0 << 8 | $1 }
        let length = trailer[4..<8].reversed().reduce(UInt32(0)) { $0 << 8 | $1 }
        #expect(crc == UInt32(input.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }))
        #expect(length == UInt32(input.count))
        if repeats > 100 { #expect(packed.count < input.count / 10) }
    }

    /// The rows' check (ISA-L's CRC-32) agrees with zlib's for every length
    /// its folding treats apart (under 16, 64 and 256 bytes, and past them)
    /// and from every alignment: rows lie anywhere in a page's bytes, and a
    /// row checked wrong would be served as corrupt (or a corrupt one as good).
    @Test func checksumsAsZlibDoesAtEveryLengthAndAlignment() {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<5000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes.withUnsafeBytes { all in
            for offset in 0..<8 {
                for count in Array(0...300) + [511, 512, 513, 850, 1023, 4096, 4991] where offset + count <= all.count {
                    let part = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + count)])
                    let zlib = UInt32(crc32(0, part.baseAddress?.assumingMemoryBound(to: Bytef.self), uInt(count)))
                    #expect(Gzip.crc32(part) == zlib, "offset \(offset), \(count) bytes")
                }
            }
        }
        // The check value of the standard's test string.
        #expect(Array("123456789".utf8).withUnsafeBytes { Gzip.crc32($0) } == 0xCBF4_3926)
    }

    /// What zlib, an independent decoder, makes of a gzip member; nil if it refuses it.
    static func inflate(_ packed: [UInt8], expectedCount: Int) -> [UInt8]? {
        var stream = z_stream()
        guard wf_inflate_init_gzip(&stream) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: expectedCount + 16)
        var input = packed
        let result: (Int32, Int) = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = uInt(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = uInt(outBuffer.count)
                return (CZlib.inflate(&stream, Z_FINISH), outBuffer.count - Int(stream.avail_out))
            }
        }
        guard result.0 == Z_STREAM_END else { return nil }
        return Array(output[..<result.1])
    }

    @Test(arguments: [1, 6, 12])
    func zlibInflatesWhatItWritesBackToTheInput(level: Int32) {
        var generator = SystemRandomNumberGenerator()
        let page = Array(String(repeating: "<article class=\"row\"><h2>Title &amp; more</h2></article>\n", count: 400).utf8)
        let noise = (0..<50_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        // Past one stored block (65,535 bytes) of bytes that do not compress: the output's bound holds.
        let moreNoise = (0..<300_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for input in [[], [0x41], page, noise, moreNoise] as [[UInt8]] {
            let packed = Gzip.compress(input, level: level)
            #expect(!packed.isEmpty)
            #expect(Self.inflate(packed, expectedCount: input.count) == input, "\(input.count) bytes at level \(level)")
        }
    }

    /// Each thread keeps its compressor for the fast level, and makes one for
    /// the call at any other: threads compressing at once at both, each get
    /// back their own input, and the same input makes the same bytes every time.
    @Test func keptCompressorsServeEveryThreadAndLevel() async {
        let inputs = (0..<16).map { n in Array(String(repeating: "<article id=\"\(n)\">row \(n)</article>\n", count: 200 + n * 37).utf8) }
        let first = inputs.map { Gzip.compress($0, level: Gzip.fastLevel) }
        await withTaskGroup(of: Bool.self) { group in
            for round in 0..<64 {
                let index = round % inputs.count
                let level: Int32 = round % 2 == 0 ? Gzip.fastLevel : 9
                group.addTask {
                    let packed = Gzip.compress(inputs[index], level: level)
                    return Self.inflate(packed, expectedCount: inputs[index].count) == inputs[index]
                        && (level != Gzip.fastLevel || packed == first[index])
                }
            }
            for await good in group { #expect(good) }
        }
    }
}
