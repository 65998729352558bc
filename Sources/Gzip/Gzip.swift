// Gzip: libdeflate's gzip, behind one call on byte arrays.
// Bodies here are compressed once and served many times (static files, cached
// pages), so a whole-buffer call is all that is needed: no streaming, no NIO.
import CDeflate

/// gzip compression through libdeflate, for bodies compressed once and served many times.
public enum Gzip {
    /// The gzip form of `bytes` at `level` (1 fast … 9 small).
    public static func compress(_ bytes: [UInt8], level: Int32 = 9) -> [UInt8] {
        bytes.withUnsafeBytes { compress($0, level: level) }
    }

    /// The gzip form of the bytes at `input` at `level`; empty if it fails.
    ///
    /// libdeflate, not zlib: a cold page is compressed on the reader's path,
    /// and for a 24 KB page at level 1 libdeflate takes less than half of
    /// zlib's time for a smaller result (BENCHMARKS.md, "Compression of a cold page").
    public static func compress(_ input: UnsafeRawBufferPointer, level: Int32 = 9) -> [UInt8] {
        guard let compressor = libdeflate_alloc_compressor(level) else { return [] }
        defer { libdeflate_free_compressor(compressor) }
        let bound = libdeflate_gzip_compress_bound(compressor, input.count)
        return [UInt8](unsafeUninitializedCapacity: bound) { output, produced in
            produced = libdeflate_gzip_compress(compressor, input.baseAddress, input.count, output.baseAddress, output.count)
        }
    }

    /// The CRC-32 of the bytes at `input` (gzip's own, the zlib polynomial):
    /// libdeflate's, about 15 bytes a nanosecond here (55–64 ns for an
    /// 800-byte row, -O2, on the shared two-core machine), so a cold page's
    /// thirty rows are checked in about 2 µs.
    public static func crc32(_ input: UnsafeRawBufferPointer) -> UInt32 {
        libdeflate_crc32(0, input.baseAddress, input.count)
    }
}
