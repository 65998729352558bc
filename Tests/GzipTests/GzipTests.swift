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
}
