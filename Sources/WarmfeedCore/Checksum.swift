/// FNV-1a checksums: fast, and enough to tell a cut or a flipped byte from the
/// real thing (they are not a defence against someone forging data on purpose).
enum Checksum {
    static func fnv1a32(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var hash: UInt32 = 0x811c_9dc5
        for byte in bytes {
            hash ^= UInt32(byte)
            hash &*= 0x0100_0193
        }
        return hash
    }

    static func fnv1a64(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return hash
    }
}
