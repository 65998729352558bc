import CMapGuard
import Foundation
import Synchronization
import ThreadSlots

/// Reads of a file out of a read-only shared mapping of it: a `memcpy` in
/// place of a `pread`, with no system call and no walk of the kernel's page
/// cache (17% of a deep page's CPU went to the `pread`s of the page index and
/// the row file; see BENCHMARKS.md).
///
/// What a mapping costs, and how each is paid:
/// - **A file cut under it.** A page past the file's end raises SIGBUS. Every
///   mapping is guarded (`CMapGuard`): the fault gets a page of zeros and the
///   mapping is marked, the read answers false, its caller reads with
///   `pread`, and the next read maps the file again. Zeros or a torn copy are
///   never taken for a row: a row file's record names its item and length,
///   and a prepared row carries its CRC-32, both checked on every read.
/// - **Growth.** A mapping is made twice as long as the file (at least
///   64 MiB of address space, which costs no memory until touched); a read
///   past it maps the file again, longer. A mapping replaced is retired and
///   unmapped once no reader can hold it (`ReadEpochs`), and its pages are
///   let go at once (`MADV_DONTNEED`: a reader still on it reads them from the
///   file again).
/// - **Memory.** Pages read through a mapping are the kernel's page cache,
///   as `pread`'s are, but they show in the process's resident set as
///   file-backed (`RssFile`), not anonymous memory (`RssAnon`).
///
/// Readers take no lock: the mapping in use is one atomic load inside a
/// read epoch (each thread announces in its own slot). Only making a mapping
/// takes the lock, as a file grows or after a cut.
final class MappedReads: Sendable {
    /// One mapping, never changed once published.
    private struct View {
        var base: UnsafeRawPointer
        var length: Int
        var slot: Int32
    }

    private struct State {
        /// Mappings replaced, each with the epoch it was replaced in.
        var retired: [(view: UInt, epoch: UInt64)] = []
        /// The file cannot be mapped (or the guard's registry is full): every read uses `pread`.
        var refused = false
    }

    /// Every reader in the process announces in one set of epochs (a slot per thread).
    private static let epochs = ReadEpochs()
    /// Whether the SIGBUS guard is in place: without it nothing is mapped.
    private static let guarded = wf_mapguard_install() == 0
    /// The least address space a mapping takes.
    static let leastLength = 64 << 20

    private let descriptor: Int32
    /// The mapping in use: a `View`'s address, 0 for none yet.
    private let current = Atomic<UInt>(0)
    /// The file's length as last seen: a read past it asks the kernel first.
    private let known = Atomic<Int64>(0)
    private let state = Mutex(State())

    /// Reads of the open file `descriptor` (which the caller keeps open while this lives).
    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        // No reader is left: each holds the file it reads.
        let views = state.withLock { state in state.retired.map(\.view) } + [current.load(ordering: .acquiring)]
        for view in views where view != 0 { Self.unmap(view) }
    }

    /// Copies `buffer.count` bytes at `at` into `buffer`: true when done;
    /// false when they must be read another way (they lie past the file's
    /// end, nothing could be mapped, this thread has no epoch slot, or the
    /// file was cut under the copy).
    func read(at: Int64, into buffer: UnsafeMutableRawBufferPointer) -> Bool {
        guard Self.guarded, at >= 0, let destination = buffer.baseAddress, buffer.count > 0 else { return false }
        let end = at + Int64(buffer.count)
        if end > known.load(ordering: .relaxed) {
            guard let size = fileSize(), size >= end else { return false }
            saw(size: size)
        }
        for attempt in 0..<2 {
            let copied = Self.epochs.read { () -> Bool in
                let address = current.load(ordering: .acquiring)
                guard let view = UnsafePointer<View>(bitPattern: address)?.pointee, end <= Int64(view.length) else { return false }
                return wf_mapguard_copy(view.slot, destination, view.base + Int(at), buffer.count) == 0
            }
            // A thread with no slot reads with `pread`.
            guard let copied else { return false }
            if copied { return true }
            guard attempt == 0, renew(covering: end) else { return false }
        }
        return false
    }

    /// The file grew to `size` (a write through its owner, or a look at it).
    func saw(size: Int64) {
        var seen = known.load(ordering: .relaxed)
        while seen < size {
            let (exchanged, original) = known.compareExchange(expected: seen, desired: size, ordering: .relaxed)
            if exchanged { break }
            seen = original
        }
    }

    /// The file was emptied by its owner.
    func emptied() {
        known.store(0, ordering: .relaxed)
    }

    private func fileSize() -> Int64? {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        return Int64(status.st_size)
    }

    /// Makes a mapping that covers `end` in place of the one in use, when
    /// that one is too short or was hit by a cut (unless another reader did
    /// meanwhile); false when none can be made.
    private func renew(covering end: Int64) -> Bool {
        state.withLock { state -> Bool in
            let old = current.load(ordering: .acquiring)
            if let view = UnsafePointer<View>(bitPattern: old)?.pointee, end <= Int64(view.length), wf_mapguard_faulted(view.slot) == 0 {
                return true
            }
            guard !state.refused, let size = fileSize() else { return false }
            known.store(size, ordering: .relaxed)
            guard size >= end else { return false }
            var length = Self.leastLength
            while Int64(length) < size * 2 { length *= 2 }
            guard let base = mmap(nil, length, PROT_READ, MAP_SHARED, descriptor, 0), base != MAP_FAILED else {
                state.refused = true
                return false
            }
            let slot = wf_mapguard_register(base, length)
            guard slot >= 0 else {
                munmap(base, length)
                state.refused = true
                return false
            }
            let view = UnsafeMutablePointer<View>.allocate(capacity: 1)
            view.initialize(to: View(base: UnsafeRawPointer(base), length: length, slot: slot))
            current.store(UInt(bitPattern: view), ordering: .releasing)
            if let replaced = UnsafePointer<View>(bitPattern: old)?.pointee {
                // Its pages go now; a reader still on it reads them from the file again.
                madvise(UnsafeMutableRawPointer(mutating: replaced.base), replaced.length, MADV_DONTNEED)
                state.retired.append((old, Self.epochs.current))
            }
            // Two steps of the epoch, when no reader holds them back, free what was retired before them.
            _ = Self.epochs.advance()
            let safe = Self.epochs.advance()
            state.retired.removeAll { retired in
                guard retired.epoch <= safe else { return false }
                Self.unmap(retired.view)
                return true
            }
            return true
        }
    }

    private static func unmap(_ address: UInt) {
        guard let view = UnsafeMutablePointer<View>(bitPattern: address) else { return }
        wf_mapguard_unregister(view.pointee.slot)
        munmap(UnsafeMutableRawPointer(mutating: view.pointee.base), view.pointee.length)
        view.deinitialize(count: 1)
        view.deallocate()
    }

    /// How many cuts the guard has turned into zeros, in every mapping of the process.
    static var faults: UInt { UInt(wf_mapguard_faults()) }
}
