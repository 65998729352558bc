import Foundation
import OriginFetcher
import ServiceLifecycle
import Synchronization
import WarmfeedCore

/// Gathers the cache's numbers for the admin views, keeps a few minutes of
/// history for the dashboard's chart, and feeds `/metrics`.
final class CacheObserver: Service, Sendable {
    let thumbnails: ThumbnailService
    let prewarmer: Prewarmer
    let pages: PageCache
    let fetcher: OriginFetcher
    let metrics: WarmfeedMetrics
    let started = ContinuousClock.now
    /// Hit ratio and origin p50 (ms), sampled every `interval`.
    let history = Mutex((hitRatio: TimeSeries(capacity: 120), originP50: TimeSeries(capacity: 120)))
    private let lastCounts = Mutex((hits: 0, requests: 0))
    let interval: Duration
    /// What the source's imports did, kept by the app.
    let source = Mutex<CacheStats.Source?>(nil)

    init(thumbnails: ThumbnailService, prewarmer: Prewarmer, pages: PageCache, fetcher: OriginFetcher, metrics: WarmfeedMetrics, interval: Duration = .seconds(5)) {
        self.thumbnails = thumbnails
        self.prewarmer = prewarmer
        self.pages = pages
        self.fetcher = fetcher
        self.metrics = metrics
        self.interval = interval
    }

    var uptime: Double { ThumbnailService.seconds(ContinuousClock.now - started) }

    /// The numbers now.
    func stats() -> CacheStats {
        let thumbs = thumbnails.snapshot
        let warm = prewarmer.snapshot
        let page = pages.usage
        func latency(_ window: LatencyWindow) -> CacheStats.Latency {
            CacheStats.Latency(count: window.total, p50Ms: window.percentile(0.5).map { $0 * 1000 }, p99Ms: window.percentile(0.99).map { $0 * 1000 })
        }
        return CacheStats(
            uptimeSeconds: uptime,
            source: source.withLock { $0 },
            memory: .init(entries: thumbs.entries, bytes: thumbs.bytes, budgetBytes: thumbs.budget),
            disk: .init(entries: thumbs.disk.entries, bytes: thumbs.disk.bytes, budgetBytes: thumbs.disk.budget),
            diskCorruptFilesReplaced: thumbs.disk.corrupt,
            pages: .init(entries: page.entries, bytes: page.bytes, budgetBytes: pages.capacity),
            hits: thumbs.counters.hits,
            misses: thumbs.counters.misses,
            hitRatio: thumbs.hitRatio,
            coalesced: thumbs.counters.coalesced,
            evictions: thumbs.counters.evictions,
            diskHits: thumbs.diskHits,
            negativeEntries: thumbs.negative,
            negativeHits: thumbs.counters.negativeHits,
            failures: thumbs.counters.failures,
            inFlight: thumbs.inFlight,
            prewarm: .init(queued: warm.queued, running: warm.running, done: warm.counters.done, cancelled: warm.counters.cancelled, dropped: warm.counters.dropped, readers: warm.readers),
            origin: .init(fetches: thumbs.originFetches, errors: thumbs.originErrors, inFlight: fetcher.stats.inFlight, latency: latency(thumbs.originLatency)),
            thumbnailLatency: latency(thumbs.thumbnailLatency)
        )
    }

    /// Takes one sample for the chart: the hit ratio of the requests since the last sample.
    func sample() {
        let stats = stats()
        let requests = stats.hits + stats.misses + stats.coalesced + stats.negativeHits
        let ratio: Double? = lastCounts.withLock { last in
            defer { last = (stats.hits, requests) }
            let asked = requests - last.requests
            return asked > 0 ? Double(stats.hits - last.hits) / Double(asked) : nil
        }
        history.withLock { history in
            history.hitRatio.append(time: stats.uptimeSeconds, value: ratio)
            history.originP50.append(time: stats.uptimeSeconds, value: stats.origin.latency.p50Ms)
        }
        metrics.update(from: stats)
    }

    func run() async throws {
        while !Task.isCancelledOrShuttingDown {
            sample()
            try? await Task.sleep(for: interval)
        }
    }
}

extension Task where Success == Never, Failure == Never {
    static var isCancelledOrShuttingDown: Bool { isCancelled || isShuttingDownGracefully }
}
