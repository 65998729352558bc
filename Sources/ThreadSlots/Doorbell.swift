import Synchronization

/// How a consumer that drains records on a timer (`ThreadRings`' one
/// consumer) sleeps while there are none, and is woken by the first producer
/// that records one, without a lock or a wake-up on the producers' path the
/// rest of the time.
///
/// A consumer that found nothing for a while `wait`s: it arms the bell, looks
/// once more (a record may have come in between), and sleeps. A producer
/// `ring`s after each record: one load of the armed flag, which no one
/// writes while the consumer is awake, so under load it is a read of a line
/// every core keeps shared. Only the producer that finds the bell armed, and
/// disarms it, wakes the consumer: one wake-up for a whole idle spell.
///
/// Arming and recording meet as in Dekker's scheme: each side writes (the
/// flag, the record), fences, then reads the other's. At least one of them
/// sees the other, so a record is never left asleep.
///
/// An idle server's consumer then sleeps instead of waking on its timer: for
/// pre-warm's drain of readers' views, 100 wake-ups a second (and three or
/// four switches of threads for each) became none; for its line of the AVIF
/// readers were answered without, 10 a second.
public final class Doorbell: Sendable {
    private let armed = Atomic<Bool>(false)
    private let sleeper = Mutex(Sleeper())

    private struct Sleeper {
        var waiter: CheckedContinuation<Void, Never>?
        /// Rung (or interrupted) while no one slept yet: the next `wait` returns at once.
        var rung = false
        /// Closed: no `wait` sleeps again.
        var closed = false
    }

    public init() {}

    /// Whether the consumer is asleep (or going to sleep): what `ring` reads.
    public var isArmed: Bool { armed.load(ordering: .relaxed) }

    /// Wakes the consumer if it is asleep. Call it after each record is
    /// published (in a `ThreadRings` ring): a fence and a load, and a wake-up
    /// only for the producer that finds the consumer asleep.
    @inline(__always)
    public func ring() {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        guard armed.load(ordering: .relaxed) else { return }
        wake()
    }

    /// The consumer's sleep: returns at once when `hasWork` (asked after the
    /// bell is armed) says there is work, when the bell was rung or closed
    /// since the last `wait`, or when the task is cancelled; otherwise when
    /// a producer rings.
    public func wait(unless hasWork: () -> Bool) async {
        armed.store(true, ordering: .relaxed)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if hasWork() {
            // A producer that disarmed it meanwhile leaves `rung` set: one early return, later.
            _ = armed.compareExchange(expected: true, desired: false, ordering: .relaxed)
            return
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let now = sleeper.withLock { sleeper -> Bool in
                    if sleeper.rung || sleeper.closed {
                        sleeper.rung = false
                        return true
                    }
                    sleeper.waiter = waiter
                    return false
                }
                if now { waiter.resume() }
            }
        } onCancel: {
            self.interrupt()
        }
        armed.store(false, ordering: .relaxed)
    }

    /// Wakes the consumer and lets it sleep no more (a shutdown).
    public func close() {
        let waiter = sleeper.withLock { sleeper -> CheckedContinuation<Void, Never>? in
            sleeper.closed = true
            defer { sleeper.waiter = nil }
            return sleeper.waiter
        }
        armed.store(false, ordering: .relaxed)
        waiter?.resume()
    }

    private func wake() {
        guard armed.compareExchange(expected: true, desired: false, ordering: .relaxed).exchanged else { return }
        interrupt()
    }

    /// Resumes the sleeping consumer, or has its next `wait` return at once.
    private func interrupt() {
        let waiter = sleeper.withLock { sleeper -> CheckedContinuation<Void, Never>? in
            guard let waiter = sleeper.waiter else {
                sleeper.rung = true
                return nil
            }
            sleeper.waiter = nil
            return waiter
        }
        waiter?.resume()
    }
}
