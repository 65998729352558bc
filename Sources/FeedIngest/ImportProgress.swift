import Reckoning

/// How far an import has got, reported while it runs.
public struct ImportProgress: Sendable, Equatable {
    /// Entries read from the source so far (written or skipped).
    public var entries: Int
    /// Time since the import began.
    public var elapsed: Duration
    /// How many entries there are in all, when known (a copy knows; a feed does not until its end).
    public var total: Int?

    /// Makes a progress report.
    public init(entries: Int, elapsed: Duration, total: Int? = nil) {
        self.entries = entries
        self.elapsed = elapsed
        self.total = total
    }

    /// Entries a second so far.
    public var rate: Double {
        let seconds = elapsed.inSeconds
        return seconds > 0 ? Double(entries) / seconds : 0
    }
}
