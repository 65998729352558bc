extension Duration {
    /// The duration in seconds, as a `Double` (for rates and for people).
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in microseconds, as a `Double`.
    public var inMicroseconds: Double {
        Double(components.seconds) * 1e6 + Double(components.attoseconds) / 1e12
    }

    /// Whole milliseconds, the rest dropped (for Redis' PX, say).
    public var wholeMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }

    /// Whole milliseconds, rounded up so a positive duration never becomes 0
    /// (which libcurl reads as "no timeout", and `poll` as "do not wait").
    public var wholeMillisecondsRoundedUp: Int64 {
        let remainder = components.attoseconds % 1_000_000_000_000_000
        return wholeMilliseconds + (remainder > 0 ? 1 : 0)
    }
}
