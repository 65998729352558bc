#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A small number for each thread, fixed for the thread's life: 0, 1, 2… in
/// the order threads first ask. It picks a thread's own slot in per-thread
/// shards (counters, read announcements, connection tables), so that a
/// request's path writes only to memory its own thread owns, as nginx's
/// workers share nothing on theirs.
///
/// Read from a thread-specific value (`pthread_getspecific`, a few
/// nanoseconds). A thread that ends gives its number back, and the next new
/// thread takes it, so the numbers stay as few as the threads alive at once
/// however many come and go (a thread per task, per test request); a slot
/// taken over so keeps what its earlier thread left in it (a count, an idle
/// connection), which is what the slot's users want.
public enum ThreadSlot {
    /// This thread's number.
    public static var current: Int {
        let shared = Key.shared
        if let stored = pthread_getspecific(shared.key) { return Int(bitPattern: stored) - 1 }
        let number = shared.free.withLock { $0.popLast() } ?? shared.next.add(1, ordering: .relaxed).oldValue
        pthread_setspecific(shared.key, UnsafeRawPointer(bitPattern: number + 1))
        return number
    }

    /// How many numbers have been given out at most (the highest is one less).
    public static var issued: Int { Key.shared.next.load(ordering: .relaxed) }

    private final class Key: Sendable {
        static let shared = Key()
        let key: pthread_key_t
        let next = Atomic<Int>(0)
        /// Numbers whose threads ended, to give out again (touched when a thread first asks, and when it ends).
        let free = Mutex<[Int]>([])

        private init() {
            var key = pthread_key_t()
            // Runs as a thread that asked ends, with its number + 1.
            let giveBack: @convention(c) (UnsafeMutableRawPointer?) -> Void = { stored in
                guard let stored else { return }
                Key.shared.free.withLock { $0.append(Int(bitPattern: stored) - 1) }
            }
            precondition(pthread_key_create(&key, giveBack) == 0, "pthread_key_create failed: no thread-specific key is left")
            self.key = key
        }
    }
}
