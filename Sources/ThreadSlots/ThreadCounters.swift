import Synchronization

/// Counters kept per thread and summed when read: a request adds to its own
/// thread's slot, on a cache line no other thread writes, instead of one word
/// (or one lock) every thread writes. A read (the admin view, a test) sums the
/// slots; it sees every addition that happened before it.
///
/// Threads past `slots` share slots by their number's remainder: still
/// correct (each addition is atomic), no longer apart.
public final class ThreadCounters: @unchecked Sendable {
    // @unchecked Sendable: the memory is only touched through the atomics in it.
    /// How many counters each thread keeps.
    public let count: Int
    private let slots: Int
    /// Bytes between two threads' slots: whole cache lines (two, against the adjacent-line prefetcher).
    private let stride: Int
    private let memory: UnsafeMutableRawPointer

    /// `count` counters for each of `slots` threads, all zero.
    public init(count: Int, slots: Int = 256) {
        self.count = max(1, count)
        self.slots = max(1, slots)
        stride = (self.count * MemoryLayout<Atomic<Int>>.stride + 127) / 128 * 128
        memory = UnsafeMutableRawPointer.allocate(byteCount: stride * self.slots, alignment: 128)
        for slot in 0..<self.slots {
            for index in 0..<self.count {
                (memory + slot * stride + index * MemoryLayout<Atomic<Int>>.stride)
                    .bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(0))
            }
        }
    }

    deinit {
        for slot in 0..<slots {
            for index in 0..<count { counter(slot, index).deinitialize(count: 1) }
        }
        memory.deallocate()
    }

    private func counter(_ slot: Int, _ index: Int) -> UnsafeMutablePointer<Atomic<Int>> {
        (memory + slot * stride + index * MemoryLayout<Atomic<Int>>.stride).assumingMemoryBound(to: Atomic<Int>.self)
    }

    /// Adds `amount` to counter `index`, in this thread's slot.
    @inline(__always)
    public func add(_ index: Int, _ amount: Int = 1) {
        counter(ThreadSlot.current % slots, index).pointee.add(amount, ordering: .relaxed)
    }

    /// Counter `index`, summed over every thread.
    public func value(_ index: Int) -> Int {
        var sum = 0
        for slot in 0..<min(slots, max(1, ThreadSlot.issued)) { sum &+= counter(slot, index).pointee.load(ordering: .relaxed) }
        return sum
    }

    /// Every counter, summed over every thread.
    public var values: [Int] { (0..<count).map(value) }
}
