import Synchronization

/// When readers last asked for something pre-warm makes only while such
/// readers are about: 2x thumbnails (readers on dense screens) and AVIF
/// (browsers that take it). An audience that cannot use them never pays for
/// them, and pre-warm keeps making them for `seconds` after the last ask.
///
/// One stamp in whole seconds, written without a lock by the thread that saw
/// the ask (only when the second changed, so a busy second writes it once;
/// an atomic maximum, so threads racing never move it back), and read
/// without one by pre-warm.
package final class DemandWindow: Sendable {
    /// How long a reader's ask keeps its demand alive, in seconds: ten minutes.
    package static let seconds: Double = 600

    /// The last ask, in whole seconds of the service's clock; -1: never.
    private let last = Atomic<Int>(-1)

    package init() {}

    /// A reader asked at `now` (seconds of the service's clock).
    package func note(at now: Double) {
        let second = Int(now)
        if last.load(ordering: .relaxed) < second { last.max(second, ordering: .relaxed) }
    }

    /// Whether a reader asked within `seconds` before `now`.
    package func isOpen(at now: Double) -> Bool {
        let last = last.load(ordering: .relaxed)
        return last >= 0 && now - Double(last) < Self.seconds
    }
}
