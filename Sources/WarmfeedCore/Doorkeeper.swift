import Synchronization

/// Remembers which keys were asked for lately, so a cache admits a value only
/// on its key's second ask: TinyLFU's doorkeeper (Caffeine), a Bloom filter of
/// one hash. A crawler or a reader deep in the feed asks for each page once;
/// keeping such a page cost an insert (a stripe's table copied, an older page
/// evicted) for a page nobody asks for again, 14% of a deep page's CPU (perf,
/// `DEEP=1 bench/pages.sh`).
///
/// No lock: one atomic OR on one word of `bits / 64`, a word another thread
/// writes only when its key hashes to it. `clear()`, now and then, forgets
/// every key; a key asked for again after it waits one ask more. A key whose
/// bit another key set is admitted at once: as a cache without a doorkeeper
/// would do, so false positives cost memory, never a miss.
public final class Doorkeeper: @unchecked Sendable {
    // @unchecked Sendable: the memory is only touched through the atomics in it.
    private let words: Int
    private let memory: UnsafeMutablePointer<Atomic<UInt64>>

    /// A doorkeeper of `bits` bits (rounded up to a power of two, at least 64).
    public init(bits: Int = 1 << 20) {
        var count = 1
        while count * 64 < bits { count <<= 1 }
        words = count
        memory = UnsafeMutableRawPointer.allocate(byteCount: count * MemoryLayout<Atomic<UInt64>>.stride, alignment: 64)
            .bindMemory(to: Atomic<UInt64>.self, capacity: count)
        for index in 0..<count { (memory + index).initialize(to: Atomic(0)) }
    }

    deinit {
        memory.deinitialize(count: words)
        memory.deallocate()
    }

    /// Whether the key with `hash` was asked for since the last `clear()`;
    /// notes that it now was.
    @inline(__always)
    public func admit(_ hash: Int) -> Bool {
        let mixed = UInt64(bitPattern: Int64(hash)) &* 0x9E37_79B9_7F4A_7C15
        let word = memory + (Int(truncatingIfNeeded: mixed >> 32) & (words - 1))
        let bit: UInt64 = 1 << (mixed >> 58)
        if word.pointee.load(ordering: .relaxed) & bit != 0 { return true }
        return word.pointee.bitwiseOr(bit, ordering: .relaxed).oldValue & bit != 0
    }

    /// Forgets every key.
    public func clear() {
        for index in 0..<words { (memory + index).pointee.store(0, ordering: .relaxed) }
    }
}
