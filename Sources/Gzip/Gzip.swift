// Gzip: libdeflate's gzip, behind one call on byte arrays, and ISA-L's CRC-32.
// Bodies here are compressed once and served many times (static files, cached
// pages), so a whole-buffer call is all that is needed: no streaming, no NIO.
import CDeflate
import CISAL
import Synchronization
import ThreadSlots

/// gzip compression through libdeflate, for bodies compressed once and served many times.
public enum Gzip {
    /// The level for bodies compressed on a request's path (cold pages):
    /// libdeflate's fastest, whose compressor each thread keeps.
    public static let fastLevel: Int32 = 1

    /// The gzip form of `bytes` at `level` (1 fast … 9 small).
    public static func compress(_ bytes: [UInt8], level: Int32 = 9) -> [UInt8] {
        bytes.withUnsafeBytes { compress($0, level: level) }
    }

    /// The gzip form of the bytes at `input` at `level`; empty if it fails.
    ///
    /// libdeflate, not zlib: a cold page is compressed on the reader's path,
    /// and for a 24 KB page at level 1 libdeflate takes less than half of
    /// zlib's time for a smaller result (docs/benchmarks-history.md, "Compression of a cold page").
    ///
    /// At `fastLevel`, the level pages are compressed at on a reader's path, each
    /// thread keeps its compressor (`Compressors`, 200 KB): its tables are
    /// larger than glibc's mapping threshold, so one made per call was a
    /// mapping made, zeroed and given back for every cold page. Other levels
    /// (652 KB at 2–9, 8.8 MB past it) are for bodies compressed once, such as
    /// static files: their compressor is made for the call and freed.
    public static func compress(_ input: UnsafeRawBufferPointer, level: Int32 = 9) -> [UInt8] {
        if level == fastLevel { return Compressors.shared.compress(input, level: level) }
        guard let compressor = libdeflate_alloc_compressor(level) else { return [] }
        defer { libdeflate_free_compressor(compressor) }
        return compress(input, with: compressor)
    }

    /// `input` compressed with `compressor`; empty if it fails.
    static func compress(_ input: UnsafeRawBufferPointer, with compressor: OpaquePointer) -> [UInt8] {
        let bound = libdeflate_gzip_compress_bound(compressor, input.count)
        return [UInt8](unsafeUninitializedCapacity: bound) { output, produced in
            produced = libdeflate_gzip_compress(compressor, input.baseAddress, input.count, output.baseAddress, output.count)
        }
    }

    /// The CRC-32 of the bytes at `input` (gzip's own, the zlib polynomial):
    /// ISA-L's `crc32_gzip_refl`, which folds 64 bytes a step with AVX-512's
    /// VPCLMULQDQ where the CPU has it. Every deep page checks thirty rows
    /// with it: libdeflate 1.14's CRC (PCLMULQDQ only) took 1.48 µs for
    /// thirty 850-byte rows, ISA-L's takes 0.55 µs (AMD EPYC, one core,
    /// the same bytes; docs/benchmarks-history.md).
    public static func crc32(_ input: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = input.baseAddress else { return 0 }
        return crc32_gzip_refl(0, base.assumingMemoryBound(to: UInt8.self), UInt64(input.count))
    }
}

/// libdeflate compressors of `Gzip.fastLevel` kept for reuse, one per thread slot
/// (`ThreadSlot`: a thread takes only its own slot's lock, which no other
/// thread takes but one sharing its slot past the last).
final class Compressors: Sendable {
    static let shared = Compressors()
    private final class Slot: Sendable {
        let compressor = Mutex<Compressor?>(nil)
    }

    /// One compressor, freed with its slot (never: the slots live as long as the process).
    private final class Compressor: @unchecked Sendable {
        // @unchecked Sendable: used only under its slot's lock.
        let pointer: OpaquePointer
        init?(level: Int32) {
            guard let pointer = libdeflate_alloc_compressor(level) else { return nil }
            self.pointer = pointer
        }
        deinit { libdeflate_free_compressor(pointer) }
    }

    private let slots = (0..<256).map { _ in Slot() }

    /// `input` compressed with this thread's compressor (of `Gzip.fastLevel`); empty when none can be made.
    func compress(_ input: UnsafeRawBufferPointer, level: Int32) -> [UInt8] {
        slots[ThreadSlot.current % slots.count].compressor.withLock { kept in
            if kept == nil { kept = Compressor(level: level) }
            guard let compressor = kept?.pointer else { return [] }
            return Gzip.compress(input, with: compressor)
        }
    }
}
