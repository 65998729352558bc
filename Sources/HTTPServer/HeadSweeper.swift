import Foundation

/// A thread of its own that shuts down overdue connections twice a second
/// (`ServerCore.expireSlowHeads`).
///
/// Not a task: on a machine whose cooperative pool is busy (a test run, a
/// burst of resizes), a sleeping task wakes late, and an idle connection
/// outlived its timeout by ten seconds and more; the HTTP core keeps its own
/// clock on its own thread, as the event loop keeps its threads.
// @unchecked Sendable: `stopped` is only touched with `condition` locked.
final class HeadSweeper: @unchecked Sendable {
    private let condition = NSCondition()
    private var stopped = false

    /// Starts the thread, which calls `sweep` every `interval` until `stop()`.
    init(interval: TimeInterval = 0.5, sweep: @escaping @Sendable () -> Void) {
        let thread = Thread { [self] in
            condition.lock()
            while !stopped {
                _ = condition.wait(until: Date(timeIntervalSinceNow: interval))
                guard !stopped else { break }
                condition.unlock()
                sweep()
                condition.lock()
            }
            condition.unlock()
        }
        thread.name = "warmfeed-head-sweeper"
        thread.start()
    }

    /// Ends the thread (after a sweep under way); calling it again does nothing.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}
