import FeedImport
import Polling
import Reckoning
import WarmfeedCore

/// What the operator sees of the sources: the totals and every source, failing first.
extension SourcePoller {

    public var status: RefreshStatus {
        let now = Self.now()
        // Under the lock only what is copied; the first sources are put in order and written after it.
        let (status, polled) = machine.withLock { machine in
            var status = machine.status
            let summary = machine.schedule.summary(now: now)
            status.sources = machine.sources.count
            status.failing = summary.failing
            status.failingForDays = summary.failingForDays
            status.hostsHeld = summary.heldHosts.count
            status.inFlight = summary.fetching
            status.waiting = summary.waiting
            status.polledElsewhere = machine.share == nil
            status.serversPolling = machine.share?.places.count ?? 0
            return (status, Self.polled(machine, now: now))
        }
        var shown = status
        shown.shown = Self.statuses(polled, first: 50)
        return shown
    }

    public func publish(into stats: inout CacheStats) {
        stats.source = status
    }

    public func sourceStatuses() -> [SourceStatus] {
        let now = Self.now()
        return Self.statuses(machine.withLock { Self.polled($0, now: now) }, first: nil)
    }

    /// Each source with its schedule's view of it, copied under the lock.
    static func polled(_ machine: Machine, now: Int64) -> [(Int64, PolledSource, PollStatus?)] {
        machine.sources.map { id, source in (id, source, machine.schedule.status(of: id, now: now)) }
    }

    /// The sources as the operator sees them, failing first; only the `first` are written out.
    static func statuses(_ polled: [(Int64, PolledSource, PollStatus?)], first: Int?) -> [SourceStatus] {
        let ordered = polled.map { id, source, polled -> (Int64, PolledSource, PollStatus?, String) in
            let state = polled?.state ?? source.poll
            let words: String =
                switch polled?.health {
                case .failingForDays?: "failing for days"
                case .failing?: "failing"
                default:
                    polled?.hostHeldUntil != nil ? "throttled" : state.lastResult == nil ? "waiting" : "ok"
                }
            return (id, source, polled, words)
        }.sorted { a, b in
            let (sa, sb) = (SourceStatus.severity(of: a.3), SourceStatus.severity(of: b.3))
            let (fa, fb) = (a.2?.state.failures ?? a.1.poll.failures, b.2?.state.failures ?? b.1.poll.failures)
            return (sa, -fa, a.1.key) < (sb, -fb, b.1.key)
        }
        return ordered.prefix(first ?? ordered.count).map { id, source, polled, words in
            let state = polled?.state ?? source.poll
            return SourceStatus(
                id: id, url: SourceURL.redacted(source.key), title: source.title ?? source.listedTitle, site: source.site ?? source.listedSite,
                listedBy: source.listedBy.map(SourceURL.redacted), state: words, items: source.items, lastFetchAt: state.lastFetchAt.map(iso),
                lastResult: source.lastResult, lastStatus: state.lastStatus, nextPollAt: state.nextPollAt.map(iso),
                consecutiveFailures: state.failures, failingSince: state.failingSince.map(iso), hostHeldUntil: polled?.hostHeldUntil.map(iso),
                bytesLast: source.bytesLast, bytesTotal: source.bytesTotal)
        }
    }

}
