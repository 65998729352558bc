import OriginFetcher
import Polling

/// How the sources are polled. The schedule's own numbers (the longest
/// interval and backoff, the limits per host and in all) are `PollRules`'
/// defaults; this holds what the command line sets.
public struct SourcesConfiguration: Sendable, Equatable {
    /// The `--source` values: feeds, folders, and lists of them.
    public var specs: [String]
    /// Every source's default interval, and how often the lists are read
    /// again (`--refresh`); nil: polled at start, then daily, and the lists
    /// read again on SIGHUP.
    public var refresh: Duration?
    /// The largest feed document a poll downloads.
    public var maxBytes = 16 << 20
    /// How long the first pass, before the server listens, may wait for a
    /// list's sources (a single feed is waited for, as long as it takes).
    public var firstPassLimit: Duration = .seconds(30)
    /// Where a feed that a list on the web names may be fetched: that list's
    /// author, not the operator, wrote its URL, so public addresses only and
    /// what the operator allowed (`--allow-origin`), as for a feed's images.
    /// The operator's own values (`--source`, a list file) reach anywhere.
    public var listedOnTheWeb: AddressPolicy = .publicOnly
    /// How long a changed feed's items wait for other polls' to be written
    /// with them, in one transaction (`GroupWriter`; not in the first pass,
    /// which the start waits for): new items show up to this much later,
    /// and a thousand changing sources cost a write a window instead of one
    /// each. What a write costs beyond its items (ranks made dense, the page
    /// index rewritten from the oldest item touched, rows made ahead) is per
    /// write, so the server's CPU falls with a longer window.
    public var writeWindow: Duration = .seconds(4)
    /// How soon a `--source` value that could not be read (a list, or a feed
    /// URL not known yet: a 503 at the first start) is read again; doubled at
    /// each failure, up to `refresh`.
    public var listRetry: Duration = .seconds(30)
    /// How often what the polls learned (validators, schedules) is written to the store.
    public var keepEvery: Duration = .seconds(5)

    /// Polls `specs` every `refresh`.
    public init(specs: [String], refresh: Duration?) {
        self.specs = specs
        self.refresh = refresh
    }

    /// Connections the feeds' own fetcher may open to one host, and in all:
    /// what the schedule starts at most (the slow lane's included).
    public var connectionsPerHost: Int { rules.perHost }
    public var connections: Int { rules.inAll + rules.slowLane }

    /// The schedule's rules.
    var rules: PollRules {
        PollRules(interval: refresh.map(Self.millis) ?? PollRules.day)
    }

    static func millis(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}
