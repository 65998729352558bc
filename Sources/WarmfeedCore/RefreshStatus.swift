import Foundation

/// What the poller of the configured sources did, as the operator's views
/// show it (`/admin/cache`'s `source`): totals over every source, and the
/// first sources in the failing-first order (`/admin/sources` has them all).
public struct RefreshStatus: Codable, Sendable {
    /// "N sources", or the one source's URL (credentials hidden).
    public var source: String
    /// The default interval between two polls of a source (`--refresh`).
    public var refreshSeconds: Double?
    /// Polls that answered (changed or not), polls whose source was not modified, and failed polls.
    public var imports = 0
    public var notModified = 0
    public var failures = 0
    /// When the last poll that brought something ended, and what it brought.
    public var lastImportAt: String?
    public var lastInserted = 0
    public var lastUpdated = 0
    public var lastProblems = 0
    public var lastError: String?
    /// Other servers sharing the store poll the sources now (this one has no place among them).
    public var polledElsewhere = false
    /// The servers sharing the polling, this one included (each polls the
    /// sources of its hosts; `sources` counts this one's); 0 when it has no place.
    public var serversPolling = 0
    /// Sources listed, failing now, failing for days, and hosts held by a `Retry-After`.
    public var sources = 0
    public var failing = 0
    public var failingForDays = 0
    public var hostsHeld = 0
    /// Polls under way, and polls due but waiting (a host's limit or hold, the limit in all).
    public var inFlight = 0
    public var waiting = 0
    /// Polls answered 429 or 503, and the bytes every poll downloaded.
    public var throttled = 0
    public var bytes = 0
    /// Sources added to and removed from the river by a read of the list.
    public var added = 0
    public var removed = 0
    /// Reads of the source list, and problems it had (entries skipped, specs that could not be read).
    public var listReads = 0
    public var listProblems = 0
    /// The last problem a read of the lists had, in an operator's words.
    public var listLastProblem: String?
    /// The first sources, failing first, for the dashboard.
    public var shown: [SourceStatus] = []

    /// Nothing polled yet of `source`, polled every `refreshSeconds`.
    public init(source: String, refreshSeconds: Double?) {
        self.source = source
        self.refreshSeconds = refreshSeconds
    }
}

/// One source as the operator sees it (`/admin/sources`, the dashboard).
public struct SourceStatus: Codable, Sendable, Equatable {
    public var id: Int64
    /// Where it is fetched from, with credentials hidden (`***`).
    public var url: String
    public var title: String?
    public var site: String?
    /// The list (`--source` value) that names it; nil for a source given as a feed itself.
    public var listedBy: String?
    /// "ok", "waiting" (not polled yet), "failing", "failing for days", or "throttled".
    public var state: String
    /// Its items in the river.
    public var items: Int
    public var lastFetchAt: String?
    public var lastResult: String?
    public var lastStatus: Int?
    public var nextPollAt: String?
    public var consecutiveFailures: Int
    public var failingSince: String?
    public var hostHeldUntil: String?
    public var bytesLast: Int
    public var bytesTotal: Int

    public init(
        id: Int64, url: String, title: String?, site: String?, listedBy: String?, state: String, items: Int, lastFetchAt: String?,
        lastResult: String?, lastStatus: Int?, nextPollAt: String?, consecutiveFailures: Int, failingSince: String?,
        hostHeldUntil: String?, bytesLast: Int, bytesTotal: Int
    ) {
        (self.id, self.url, self.title, self.site, self.listedBy, self.state) = (id, url, title, site, listedBy, state)
        (self.items, self.lastFetchAt, self.lastResult, self.lastStatus) = (items, lastFetchAt, lastResult, lastStatus)
        (self.nextPollAt, self.consecutiveFailures, self.failingSince) = (nextPollAt, consecutiveFailures, failingSince)
        (self.hostHeldUntil, self.bytesLast, self.bytesTotal) = (hostHeldUntil, bytesLast, bytesTotal)
    }

    /// How bad its state is, for the failing-first order: failing for days, failing, throttled, the rest.
    public var severity: Int { Self.severity(of: state) }

    /// How bad a state in words is: failing for days 0, failing 1, throttled 2, the rest 3.
    public static func severity(of state: String) -> Int {
        switch state {
        case "failing for days": 0
        case "failing": 1
        case "throttled": 2
        default: 3
        }
    }
}

/// What lists every source for the operator (the poller); the admin routes
/// hold it as this protocol, and see no feature.
public protocol SourceListing: Sendable {
    /// Every source, failing first.
    func sourceStatuses() -> [SourceStatus]
}
