/// One number an operator reads, named once, beside the field it reads: its
/// `/metrics` series (`warmfeed_` + `name`), whether it is a level now (a
/// gauge), a count since the start (a counter) or words (shown on the
/// dashboard, never a series), its unit, and where it is read in the stats.
///
/// Each feature's numbers are listed in one place, with its section of
/// `CacheStats` (`CacheStats.Origin.numbers`, …); `CacheStats.numbers` is
/// every list. `/metrics` makes a gauge or counter of each, and the
/// dashboard's template names each by `name` (its schema is this list, so
/// a name it uses that no number has stops the start). `/admin/cache` is
/// the stats themselves, as JSON.
public struct StatNumber: Sendable {
    public enum Kind: Sendable, Equatable {
        case gauge, counter, words
    }

    /// How the dashboard writes it: a count, bytes (MB), seconds (ms below
    /// one), a ratio (a percentage), a flag (yes or no), or text.
    public enum Unit: Sendable, Equatable {
        case count, bytes, seconds, ratio, flag, text
    }

    public enum Value: Sendable, Equatable {
        case number(Double)
        case text(String)
    }

    public let name: String
    public let kind: Kind
    public let unit: Unit
    /// Its value in `stats`; nil when the stats hold none (a section absent, a latency not seen yet).
    public let read: @Sendable (CacheStats) -> Value?

    /// A level now, in `unit`.
    public static func gauge(_ name: String, _ unit: Unit = .count, _ read: @escaping @Sendable (CacheStats) -> Int?) -> StatNumber {
        StatNumber(name: name, kind: .gauge, unit: unit) { read($0).map { .number(Double($0)) } }
    }

    /// A level now, in `unit` (seconds, a ratio).
    public static func gauge(_ name: String, _ unit: Unit, _ read: @escaping @Sendable (CacheStats) -> Double?) -> StatNumber {
        StatNumber(name: name, kind: .gauge, unit: unit) { read($0).map { .number($0) } }
    }

    /// A yes or no, a gauge of 1 or 0.
    public static func flag(_ name: String, _ read: @escaping @Sendable (CacheStats) -> Bool?) -> StatNumber {
        StatNumber(name: name, kind: .gauge, unit: .flag) { read($0).map { .number($0 ? 1 : 0) } }
    }

    /// A count since the start (it only rises while the part runs).
    public static func counter(_ name: String, _ read: @escaping @Sendable (CacheStats) -> Int?) -> StatNumber {
        StatNumber(name: name, kind: .counter, unit: .count) { read($0).map { .number(Double($0)) } }
    }

    /// Words the dashboard shows (a location, a problem); not a series.
    public static func words(_ name: String, _ read: @escaping @Sendable (CacheStats) -> String?) -> StatNumber {
        StatNumber(name: name, kind: .words, unit: .text) { read($0).map { .text($0) } }
    }

    /// The number as `/metrics` sets it; nil for words, or none held.
    public func number(in stats: CacheStats) -> Double? {
        guard case .number(let value)? = read(stats) else { return nil }
        return value
    }
}
