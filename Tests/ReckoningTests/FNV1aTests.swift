import Reckoning
import Testing

/// Vectors from the FNV reference test suite.
@Suite struct FNV1aTests {
    @Test(arguments: [
        ("", UInt32(0x811c_9dc5), UInt64(0xcbf2_9ce4_8422_2325)),
        ("a", 0xe40c_292c, 0xaf63_dc4c_8601_ec8c),
        ("foobar", 0xbf9c_f968, 0x8594_4171_f739_67e8),
    ])
    func referenceVectors(text: String, hash32: UInt32, hash64: UInt64) {
        #expect(FNV1a.hash32(text.utf8) == hash32)
        #expect(FNV1a.hash64(text.utf8) == hash64)
        #expect(FNV1a.hash64(Array(text.utf8)) == hash64)
        Array(text.utf8).withUnsafeBytes { #expect(FNV1a.hash64($0) == hash64) }
    }
}
