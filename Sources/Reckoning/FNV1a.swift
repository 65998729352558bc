/// FNV-1a hashes: fast and stable across runs and machines, enough to tell a
/// cut or a flipped byte from the real thing, or to name content by its bytes.
/// Not a defence against anyone forging data on purpose.
public enum FNV1a {
    /// The 32-bit FNV-1a hash of `bytes`.
    @inlinable
    public static func hash32(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var hash: UInt32 = 0x811c_9dc5
        for byte in bytes {
            hash ^= UInt32(byte)
            hash &*= 0x0100_0193
        }
        return hash
    }

    /// The 64-bit FNV-1a hash of `bytes`.
    @inlinable
    public static func hash64(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return hash
    }
}
