import Synchronization

/// Records kept per thread and taken by one consumer: a request writes what
/// it saw into its own thread's bounded ring, on memory no other thread
/// writes, instead of taking a lock every thread takes; whoever acts on the
/// records (pre-warm's planner) drains every ring from time to time, under
/// its own lock, off the request path. Caffeine records its cache's reads the
/// same way (read buffers replayed under the policy's lock).
///
/// A ring is lossy when full: the record is dropped and counted, never
/// waited for, so a request never stalls on a slow consumer. Each ring is a
/// bounded queue with a sequence number per cell (Vyukov's): threads past
/// `slots` share rings by their number's remainder and stay correct (a
/// producer claims its cell with a compare-and-swap, which on its own ring
/// never fails), just no longer apart.
public final class ThreadRings<Element: BitwiseCopyable>: @unchecked Sendable {
    // @unchecked Sendable: a cell's element is written only by the producer that
    // claimed it and read only by the one consumer after the cell's sequence
    // (an atomic, release/acquire) says so; the rest is atomics.
    /// Records each ring holds.
    public let capacity: Int
    /// Rings: one for each thread number below it.
    public let slots: Int
    private let mask: Int
    /// A ring: a header (its enqueue and dequeue positions, its drops) and its cells.
    private let rings: UnsafeMutableRawPointer
    private let ringBytes: Int
    private static var headerBytes: Int { 256 }
    private static var cellStride: Int { (MemoryLayout<Atomic<Int>>.stride + MemoryLayout<Element>.stride + 15) / 16 * 16 }

    /// `slots` rings of `capacity` records each (rounded up to a power of two).
    public init(capacity: Int = 256, slots: Int = 256) {
        var size = 2
        while size < capacity { size *= 2 }
        self.capacity = size
        mask = size - 1
        self.slots = max(1, slots)
        ringBytes = (Self.headerBytes + size * Self.cellStride + 127) / 128 * 128
        rings = UnsafeMutableRawPointer.allocate(byteCount: ringBytes * self.slots, alignment: 128)
        for slot in 0..<self.slots {
            let ring = rings + slot * ringBytes
            // Enqueue position, its own line; dequeue position and drops, another.
            (ring).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(0))
            (ring + 128).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(0))
            (ring + 136).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(0))
            for index in 0..<size {
                (ring + Self.headerBytes + index * Self.cellStride).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(index))
            }
        }
    }

    deinit {
        for slot in 0..<slots {
            let ring = rings + slot * ringBytes
            enqueue(ring).deinitialize(count: 1)
            dequeue(ring).deinitialize(count: 1)
            drops(ring).deinitialize(count: 1)
            for index in 0..<capacity { sequence(ring, index).deinitialize(count: 1) }
        }
        rings.deallocate()
    }

    private func enqueue(_ ring: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Atomic<Int>> { ring.assumingMemoryBound(to: Atomic<Int>.self) }
    private func dequeue(_ ring: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Atomic<Int>> {
        (ring + 128).assumingMemoryBound(to: Atomic<Int>.self)
    }
    private func drops(_ ring: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Atomic<Int>> {
        (ring + 136).assumingMemoryBound(to: Atomic<Int>.self)
    }
    private func sequence(_ ring: UnsafeMutableRawPointer, _ index: Int) -> UnsafeMutablePointer<Atomic<Int>> {
        (ring + Self.headerBytes + index * Self.cellStride).assumingMemoryBound(to: Atomic<Int>.self)
    }
    private func element(_ ring: UnsafeMutableRawPointer, _ index: Int) -> UnsafeMutableRawPointer {
        ring + Self.headerBytes + index * Self.cellStride + MemoryLayout<Atomic<Int>>.stride
    }

    /// Records `element` in this thread's ring; returns false (and counts a
    /// drop) when the ring is full. Takes no lock and waits for nothing.
    @discardableResult
    public func record(_ element: Element) -> Bool {
        let ring = rings + (ThreadSlot.current % slots) * ringBytes
        var position = enqueue(ring).pointee.load(ordering: .relaxed)
        while true {
            let cell = sequence(ring, position & mask)
            let seq = cell.pointee.load(ordering: .acquiring)
            if seq == position {
                let (won, seen) = enqueue(ring).pointee.compareExchange(
                    expected: position, desired: position + 1, ordering: .relaxed)
                if won {
                    self.element(ring, position & mask).storeBytes(of: element, as: Element.self)
                    cell.pointee.store(position + 1, ordering: .releasing)
                    return true
                }
                position = seen
            } else if seq < position {
                // The cell still holds a record from a lap ago: the ring is full.
                drops(ring).pointee.add(1, ordering: .relaxed)
                return false
            } else {
                position = enqueue(ring).pointee.load(ordering: .relaxed)
            }
        }
    }

    /// Hands every record waiting in every ring to `body`, ring by ring, each
    /// ring's in the order it recorded them. One consumer at a time (the
    /// caller serialises drains). Returns how many were handed over.
    @discardableResult
    public func drain(_ body: (Element) -> Void) -> Int {
        var taken = 0
        for slot in 0..<min(slots, max(1, ThreadSlot.issued)) {
            let ring = rings + slot * ringBytes
            var position = dequeue(ring).pointee.load(ordering: .relaxed)
            while true {
                let cell = sequence(ring, position & mask)
                guard cell.pointee.load(ordering: .acquiring) == position + 1 else { break }
                let record = element(ring, position & mask).load(as: Element.self)
                // The cell is free again for the producer one lap on.
                cell.pointee.store(position + capacity, ordering: .releasing)
                position += 1
                taken += 1
                body(record)
            }
            dequeue(ring).pointee.store(position, ordering: .relaxed)
        }
        return taken
    }

    /// Records dropped so far because their thread's ring was full.
    public var dropped: Int {
        (0..<min(slots, max(1, ThreadSlot.issued))).reduce(0) { $0 + drops(rings + $1 * ringBytes).pointee.load(ordering: .relaxed) }
    }
}
