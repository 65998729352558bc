// Gzip: gzip behind one call on byte arrays (ISA-L's igzip at the fast level,
// libdeflate at the others), and ISA-L's CRC-32.
// Bodies here are compressed once and served many times (static files, cached
// pages), so a whole-buffer call is all that is needed: no streaming, no NIO.
import CDeflate
import CISAL
import Synchronization
import ThreadSlots

/// gzip compression, for bodies compressed once and served many times.
public enum Gzip {
    /// The level for bodies compressed on a request's path (cold pages):
    /// igzip's level 1, whose stream each thread keeps.
    public static let fastLevel: Int32 = 1

    /// The gzip form of `bytes` at `level` (1 fast … 9 small).
    public static func compress(_ bytes: [UInt8], level: Int32 = 9) -> [UInt8] {
        bytes.withUnsafeBytes { compress($0, level: level) }
    }

    /// The gzip form of the bytes at `input` at `level`; empty if it fails.
    ///
    /// At `fastLevel`, the level pages are compressed at on a reader's path:
    /// ISA-L's igzip, level 1, with the stream and its buffers each thread
    /// keeps (`Compressors`, 168 KB; one made per call was a mapping made,
    /// zeroed and given back for every cold page). On a 25 KB page it takes
    /// 20.6 µs against libdeflate's 29.5 µs at its level 1, for 1.4% more
    /// bytes (docs/benchmarks-history.md, "igzip for cold pages"); libdeflate
    /// had taken less than half of zlib's time ("Compression of a cold page").
    ///
    /// Other levels are libdeflate's (652 KB at 2–9, 8.8 MB past it), for
    /// bodies compressed once, such as static files: their compressor is made
    /// for the call and freed.
    public static func compress(_ input: UnsafeRawBufferPointer, level: Int32 = 9) -> [UInt8] {
        if level == fastLevel { return Compressors.shared.compress(input) }
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

/// igzip streams of `Gzip.fastLevel` kept for reuse, one per thread slot
/// (`ThreadSlot`: a thread takes only its own slot's lock, which no other
/// thread takes but one sharing its slot past the last).
final class Compressors: Sendable {
    static let shared = Compressors()
    private final class Slot: Sendable {
        let compressor = Mutex<Compressor?>(nil)
    }

    /// An igzip stream and its level-1 buffer, freed with its slot (never:
    /// the slots live as long as the process).
    private final class Compressor: @unchecked Sendable {
        // @unchecked Sendable: used only under its slot's lock.
        let stream = UnsafeMutablePointer<isal_zstream>.allocate(capacity: 1)
        let levelBuffer = UnsafeMutablePointer<UInt8>.allocate(capacity: Int(WF_ISAL_LEVEL1_BUFFER))

        deinit {
            stream.deallocate()
            levelBuffer.deallocate()
        }

        /// `input` as one gzip member; empty when igzip cannot (an input past
        /// 4 GiB, or output past the bound: then it is sent plain).
        func compress(_ input: UnsafeRawBufferPointer) -> [UInt8] {
            guard input.count < Int(UInt32.max / 2) else { return [] }
            // No bytes (and no address): any valid address, of which none is read.
            let base = input.baseAddress ?? UnsafeRawPointer(levelBuffer)
            // Stored blocks of incompressible bytes cost 5 bytes in 65,535; the header and trailer, under 1 KB.
            let bound = input.count + input.count / 64 + 1024
            return [UInt8](unsafeUninitializedCapacity: bound) { output, produced in
                isal_deflate_stateless_init(stream)
                stream.pointee.level = 1
                stream.pointee.level_buf = levelBuffer
                stream.pointee.level_buf_size = WF_ISAL_LEVEL1_BUFFER
                stream.pointee.gzip_flag = WF_ISAL_GZIP
                stream.pointee.end_of_stream = 1
                stream.pointee.flush = WF_ISAL_NO_FLUSH
                stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
                stream.pointee.avail_in = UInt32(input.count)
                stream.pointee.next_out = output.baseAddress
                stream.pointee.avail_out = UInt32(output.count)
                produced = isal_deflate_stateless(stream) == WF_ISAL_COMP_OK ? Int(stream.pointee.total_out) : 0
            }
        }
    }

    private let slots = (0..<256).map { _ in Slot() }

    /// `input` compressed with this thread's stream; empty when it cannot be.
    func compress(_ input: UnsafeRawBufferPointer) -> [UInt8] {
        slots[ThreadSlot.current % slots.count].compressor.withLock { kept in
            if kept == nil { kept = Compressor() }
            return kept?.compress(input) ?? []
        }
    }
}
