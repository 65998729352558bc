/// Counters for the admin page; a snapshot, read without waiting for work.
public struct ThumbnailerStats: Sendable, Equatable {
    /// Thumbnails made since start.
    public var made: Int
    /// Thumbnails refused or failed since start (cancellations excluded).
    public var failed: Int
    /// Thumbnails whose caller gave up while they were still queued.
    public var cancelled: Int
    /// Jobs waiting for a worker now.
    public var queued: Int
    /// Jobs on a worker now.
    public var running: Int
    /// The most jobs that were ever on workers at once; never above the worker count.
    public var peakRunning: Int

    /// A snapshot of counters.
    public init(made: Int = 0, failed: Int = 0, cancelled: Int = 0, queued: Int = 0, running: Int = 0, peakRunning: Int = 0) {
        self.made = made
        self.failed = failed
        self.cancelled = cancelled
        self.queued = queued
        self.running = running
        self.peakRunning = peakRunning
    }
}
