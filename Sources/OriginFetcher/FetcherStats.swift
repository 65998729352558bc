/// Plain counters of what the fetcher has done since it started, for the admin
/// stats and for tests.
public struct FetcherStats: Sendable, Hashable {
    /// Transfers handed to libcurl.
    public var started: Int = 0
    /// Transfers that ended with an answer: a body, a 304, or a status the
    /// download was told to pass.
    public var finished: Int = 0
    /// Fetches that ended with an error other than `cancelled` (refused URLs included).
    public var failed: Int = 0
    /// Fetches their limits refused (counted in `failed` too): an address the
    /// `AddressPolicy` does not allow, or a file outside `fileRoots`.
    public var refused: Int = 0
    /// Fetches that ended because their task was cancelled or the fetcher shut down.
    public var cancelled: Int = 0
    /// Fetches that waited longer than their bound for a connection to a busy origin and never started.
    public var busy: Int = 0
    /// Fetches whose kept-alive connection failed before their answer came
    /// (closed idle, or a stale 408 waiting on it), sent again on a new connection.
    public var retriedOnNewConnection: Int = 0
    /// Fetches accepted and not yet ended (waiting for the transfer thread, or in libcurl).
    public var inFlight: Int = 0

    /// All zero.
    public init() {}
}
