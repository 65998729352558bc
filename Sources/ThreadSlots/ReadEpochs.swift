import Synchronization

/// Epoch-based reclamation: readers that take no lock, and writers that know
/// when nothing a reader may still hold can be let go.
///
/// A reader announces the epoch it reads in, in its own thread's slot (a cache
/// line no other thread writes), reads shared structures through atomic
/// loads, and clears its slot. A writer that unlinks an object retires it,
/// tagged with the epoch then; the epoch moves on only once every reader
/// announced the current one, so an object retired in epoch e is unreachable
/// by any reader once the epoch is e + 2, and is released then (Fraser's
/// scheme, as in crossbeam-epoch and the Linux kernel's RCU grace periods).
///
/// Threads past `slots` have no slot of their own: `read` answers nil for
/// them and the caller reads another way (under the writers' lock).
public final class ReadEpochs: @unchecked Sendable {
    // @unchecked Sendable: the slot memory is only touched through the atomics in it.
    /// The readers' slots.
    public let slots: Int
    private let memory: UnsafeMutableRawPointer
    private static let stride = 128
    /// The current epoch; starts at 3 (0 in a slot means "not reading"; nothing is tagged below 3).
    private let global = Atomic<UInt64>(3)

    /// Room for `slots` reading threads.
    public init(slots: Int = 512) {
        self.slots = max(1, slots)
        memory = UnsafeMutableRawPointer.allocate(byteCount: Self.stride * self.slots, alignment: 128)
        for slot in 0..<self.slots {
            (memory + slot * Self.stride).bindMemory(to: Atomic<UInt64>.self, capacity: 1).initialize(to: Atomic(0))
        }
    }

    deinit {
        for slot in 0..<slots { announcement(slot).deinitialize(count: 1) }
        memory.deallocate()
    }

    private func announcement(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt64>> {
        (memory + slot * Self.stride).assumingMemoryBound(to: Atomic<UInt64>.self)
    }

    /// Runs `body` as a reader: nothing retired while it runs is released
    /// before it returns. Nil (and `body` not run) on a thread without a slot.
    /// Not reentrant: `body` must not read through the same epochs again.
    @inline(__always)
    public func read<Result>(_ body: () -> Result) -> Result? {
        let slot = ThreadSlot.current
        guard slot < slots else { return nil }
        let mine = announcement(slot)
        mine.pointee.store(global.load(ordering: .relaxed), ordering: .sequentiallyConsistent)
        // The announcement is seen before any load the reader makes (a store-load fence).
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        defer { mine.pointee.store(0, ordering: .releasing) }
        return body()
    }

    /// The epoch now: a writer tags what it retires with it.
    public var current: UInt64 { global.load(ordering: .sequentiallyConsistent) }

    /// Moves the epoch on if every reader announced the current one (or none
    /// reads), and answers the epoch up to which retired objects may now be
    /// released: those tagged with it or earlier.
    public func advance() -> UInt64 {
        let epoch = global.load(ordering: .sequentiallyConsistent)
        for slot in 0..<min(slots, max(1, ThreadSlot.issued)) {
            let announced = announcement(slot).pointee.load(ordering: .sequentiallyConsistent)
            if announced != 0, announced != epoch { return epoch - 2 }
        }
        // Another writer may have moved it meanwhile: then this one need not.
        _ = global.compareExchange(expected: epoch, desired: epoch + 1, ordering: .sequentiallyConsistent)
        return global.load(ordering: .sequentiallyConsistent) - 2
    }
}
