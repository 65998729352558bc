import Reckoning

/// Seconds on a monotonic clock, injected wherever time matters (TTLs,
/// latencies, readers' pace), so state machines and services never read a
/// clock of their own and tests can move time by hand.
///
/// One is made when the app is assembled and handed to every part that needs
/// it; all of them then agree on what "now" is.
public struct Uptime: Sendable {
    private let read: @Sendable () -> Double

    /// Seconds since this value was made, on `ContinuousClock`.
    public init() {
        let start = ContinuousClock.now
        read = { Uptime.seconds(ContinuousClock.now - start) }
    }

    /// A clock that reads `now` from `reading` (tests: a value they move by hand).
    public init(reading: @escaping @Sendable () -> Double) {
        read = reading
    }

    /// Seconds now.
    public var now: Double { read() }

    /// A `Duration` in seconds, as a `Double`.
    public static func seconds(_ duration: Duration) -> Double {
        duration.inSeconds
    }
}
