import Synchronization

/// How often each key was asked for lately, estimated in a fixed space:
/// TinyLFU's frequency sketch (Caffeine's `FrequencySketch`), by which a
/// cache keeps a new value only over one asked for less often.
///
/// A crawler or a reader deep in the feed asks for pages evenly: each kept
/// page evicts another asked for as often, an insert (a stripe's table
/// copied, a page let go) that buys nothing. Compared with the page it would
/// evict, such a page is refused; a page asked for more often than the
/// cache's least is kept.
///
/// Each key has four 4-bit counters (at most 15), all in one word, one in
/// each quarter of it (Caffeine's blocks, at the size of one atomic): its
/// estimate is their least, and an ask raises only the counters at that
/// least (the conservative update), so another key's asks inflate it
/// rarely. `halve()` ages every count, as Caffeine's reset does.
///
/// No lock: an ask is one compare-and-exchange on one word, which another
/// thread writes only when its key falls in the same word.
public final class FrequencySketch: @unchecked Sendable {
    // @unchecked Sendable: the memory is only touched through the atomics in it.
    private let words: Int
    private let memory: UnsafeMutablePointer<Atomic<UInt64>>

    /// A sketch of about `counters` counters (rounded up to a power of two, at least 16), four a key.
    public init(counters: Int = 1 << 18) {
        var count = 1
        while count * 16 < counters { count <<= 1 }
        words = count
        memory = UnsafeMutableRawPointer.allocate(byteCount: count * MemoryLayout<Atomic<UInt64>>.stride, alignment: 64)
            .bindMemory(to: Atomic<UInt64>.self, capacity: count)
        for index in 0..<count { (memory + index).initialize(to: Atomic(0)) }
    }

    deinit {
        memory.deinitialize(count: words)
        memory.deallocate()
    }

    /// The word of the key with `hash`, and the shifts of its four counters in it.
    @inline(__always)
    private func place(_ hash: Int) -> (word: UnsafeMutablePointer<Atomic<UInt64>>, shifts: SIMD4<UInt64>) {
        let mixed = UInt64(bitPattern: Int64(hash)) &* 0x9E37_79B9_7F4A_7C15
        let word = memory + (Int(truncatingIfNeeded: mixed >> 32) & (words - 1))
        // Counter q of the key: one of the four in quarter q (bits 16q..<16q+16).
        let columns = SIMD4<UInt64>(mixed >> 56, mixed >> 58, mixed >> 60, mixed >> 62) & 3
        return (word, (SIMD4<UInt64>(0, 16, 32, 48) &+ columns &* 4))
    }

    @inline(__always)
    private static func estimate(_ word: UInt64, _ shifts: SIMD4<UInt64>) -> UInt64 {
        ((SIMD4<UInt64>(repeating: word) &>> shifts) & 15).min()
    }

    /// The estimate for the key with `hash`: at least how often it was
    /// asked for (halved since as `halve()` ages), at most 15.
    @inline(__always)
    public func frequency(_ hash: Int) -> Int {
        let (word, shifts) = place(hash)
        return Int(Self.estimate(word.pointee.load(ordering: .relaxed), shifts))
    }

    /// Notes an ask for the key with `hash`; returns its estimate now.
    @discardableResult
    public func increment(_ hash: Int) -> Int {
        let (word, shifts) = place(hash)
        var old = word.pointee.load(ordering: .relaxed)
        while true {
            let least = Self.estimate(old, shifts)
            guard least < 15 else { return 15 }
            // The counters at the least, raised by one.
            let raised = (SIMD4<UInt64>(repeating: old) &>> shifts) & 15 .== SIMD4(repeating: least)
            let steps = SIMD4<UInt64>(repeating: 0).replacing(with: SIMD4(repeating: 1) &<< shifts, where: raised)
            let new = old &+ steps.wrappedSum()
            let (exchanged, original) = word.pointee.compareExchange(expected: old, desired: new, ordering: .relaxed)
            if exchanged { return Int(least + 1) }
            old = original
        }
    }

    /// Halves every count, so the estimates say how often lately.
    public func halve() {
        for index in 0..<words {
            let word = memory + index
            var old = word.pointee.load(ordering: .relaxed)
            while old != 0 {
                let (exchanged, original) = word.pointee.compareExchange(expected: old, desired: (old >> 1) & 0x7777_7777_7777_7777, ordering: .relaxed)
                if exchanged { break }
                old = original
            }
        }
    }
}
