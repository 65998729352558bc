/// The most recent latencies of one kind, for p50/p99 in the admin view.
///
/// A fixed ring of samples: memory stays flat however long the server runs,
/// and percentiles describe recent behaviour, not the whole uptime.
public struct LatencyWindow: Sendable {
    private var samples: [Double]
    private var next = 0
    private var filled = 0
    /// Samples recorded since start.
    public private(set) var total = 0

    /// A window of the last `capacity` samples.
    public init(capacity: Int = 2048) {
        samples = Array(repeating: 0, count: max(1, capacity))
    }

    /// Records one latency, in seconds.
    public mutating func record(_ seconds: Double) {
        samples[next] = seconds
        next = (next + 1) % samples.count
        filled = min(filled + 1, samples.count)
        total += 1
    }

    /// The `p`-th percentile (0…1) of the window, in seconds; nil when empty.
    public func percentile(_ p: Double) -> Double? {
        guard filled > 0 else { return nil }
        let sorted = samples[0..<filled].sorted()
        let rank = Int((p * Double(filled - 1)).rounded(.up))
        return sorted[min(filled - 1, max(0, rank))]
    }
}

/// Samples of a value over time (one every few seconds), for the dashboard's chart.
public struct TimeSeries: Sendable {
    /// One sample.
    public struct Point: Sendable, Equatable {
        /// Seconds since the server started.
        public var time: Double
        /// The value (nil when there was nothing to measure).
        public var value: Double?
    }

    /// The samples, oldest first.
    public private(set) var points: [Point] = []
    /// The most samples kept.
    public let capacity: Int

    /// A series keeping the last `capacity` samples.
    public init(capacity: Int = 120) {
        self.capacity = max(1, capacity)
    }

    /// Appends a sample, dropping the oldest past capacity.
    public mutating func append(time: Double, value: Double?) {
        points.append(Point(time: time, value: value))
        if points.count > capacity { points.removeFirst(points.count - capacity) }
    }
}
