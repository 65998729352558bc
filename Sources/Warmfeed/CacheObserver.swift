import DemoOrigin
import FeedIngest
import Foundation
import HTTPServer
import OriginFetcher
import SQLiteStore
import ServiceLifecycle
import Synchronization
import WarmfeedCore

/// Gathers the cache's numbers for the admin views, keeps a few minutes of
/// history for the dashboard's chart (sampled on its own clock, never by a
/// scrape), and sets `/metrics`' gauges when scraped.
final class CacheObserver: Service, Sendable {
    let thumbnails: ThumbnailService
    let prewarmer: Prewarmer
    let pages: PageCache
    let fetcher: OriginFetcher
    let refresher: SourceRefresher?
    let store: any FeedStore
    let demo: DemoOrigin?
    let shared: SharedTier?
    let rows: RowPreparation?
    let node: String
    let metrics: WarmfeedMetrics
    let clock: Uptime
    /// Hit ratio and origin p50 (ms), sampled every `interval`, with the counts
    /// of the last sample (the ratio is of the requests between two samples).
    private let samples = Mutex(History())
    let interval: Duration
    /// The HTTP server, once made (it is made after the routes that show this observer).
    private let server = Mutex<HTTPServer?>(nil)

    struct History {
        var hitRatio = TimeSeries(capacity: 120)
        var originP50 = TimeSeries(capacity: 120)
        var lastHits = 0
        var lastRequests = 0
    }

    init(
        thumbnails: ThumbnailService, prewarmer: Prewarmer, pages: PageCache, fetcher: OriginFetcher,
        refresher: SourceRefresher?, demo: DemoOrigin?, shared: SharedTier? = nil, rows: RowPreparation? = nil, node: String = "", store: any FeedStore,
        metrics: WarmfeedMetrics, clock: Uptime, interval: Duration = .seconds(5)
    ) {
        self.shared = shared
        self.rows = rows
        self.node = node
        self.store = store
        self.demo = demo
        self.thumbnails = thumbnails
        self.prewarmer = prewarmer
        self.pages = pages
        self.fetcher = fetcher
        self.refresher = refresher
        self.metrics = metrics
        self.clock = clock
        self.interval = interval
    }

    var uptime: Double { clock.now }

    /// Shows `server`'s connections from now on.
    func watch(_ server: HTTPServer) {
        self.server.withLock { $0 = server }
    }

    /// The dashboard's series so far.
    var history: (hitRatio: TimeSeries, originP50: TimeSeries) {
        samples.withLock { ($0.hitRatio, $0.originP50) }
    }

    /// The numbers now.
    func stats() -> CacheStats {
        let thumbs = thumbnails.snapshot
        let storeStatus = store.status
        let warm = prewarmer.snapshot
        let leads = prewarmer.leads
        let page = pages.usage
        let fetched = fetcher.stats
        func latency(_ window: LatencyWindow) -> CacheStats.Latency { CacheStats.Latency(window) }
        func hits(in name: String) -> Int {
            thumbnails.tiers.firstIndex { $0.name == name }.map { thumbs.counters.tierHits[$0] } ?? 0
        }
        var stats = CacheStats(
            uptimeSeconds: uptime,
            store: CacheStats.Store(
                backend: storeStatus.backend, location: storeStatus.location, answering: storeStatus.answering,
                problem: storeStatus.problem, revision: store.revision
            ),
            source: refresher?.status,
            memory: .init(entries: thumbs.entries, bytes: thumbs.bytes, budgetBytes: thumbs.budget),
            disk: .init(entries: thumbs.disk.entries, bytes: thumbs.disk.bytes, budgetBytes: thumbs.disk.budget),
            originals: .init(
                disk: .init(entries: thumbs.originalsOnDisk.entries, bytes: thumbs.originalsOnDisk.bytes, budgetBytes: thumbs.originalsOnDisk.budget),
                fromDisk: thumbs.counters.originalsFromDisk, fromMemory: thumbs.counters.originalReuses),
            diskCorruptFilesReplaced: thumbs.disk.corrupt,
            diskMaxEntries: thumbs.disk.maxEntries,
            pages: .init(entries: page.entries, bytes: page.bytes, budgetBytes: pages.capacity),
            pageHits: pages.lookups.hits,
            pageMisses: pages.lookups.misses,
            pageNotKept: pages.notKept,
            hits: thumbs.counters.hits,
            misses: thumbs.counters.misses,
            hitRatio: thumbs.hitRatio,
            coalesced: thumbs.counters.coalesced,
            evictions: thumbs.counters.evictions,
            diskHits: hits(in: "disk"),
            negativeEntries: thumbs.negative,
            negativeHits: thumbs.counters.negativeHits,
            failures: thumbs.counters.failures,
            inFlight: thumbs.inFlight,
            prewarm: .init(
                queued: warm.queued, running: warm.running, done: warm.counters.done, cancelled: warm.counters.cancelled, dropped: warm.counters.dropped,
                readers: warm.readers,
                pageOneWarmSeconds: prewarmer.topWarmAfter,
                leads: Dictionary(uniqueKeysWithValues: leads.leads.map { (String($0.key), $0.value) }),
                pageWarmSeconds: leads.warmSeconds),
            origin: .init(
                fetches: thumbs.counters.originFetches, errors: thumbs.counters.originErrors, inFlight: fetched.inFlight,
                busy: fetched.busy, cancelled: fetched.cancelled, retried: fetched.retriedOnNewConnection, latency: latency(thumbs.originLatency)),
            thumbnailLatency: latency(thumbs.thumbnailLatency),
            connections: server.withLock { $0?.connections } ?? ConnectionCounts(),
            memoryUse: memoryUse(thumbs: thumbs, pages: page.bytes)
        )
        stats.node = node
        stats.rows = rows?.status
        stats.resizes = thumbs.counters.resizes
        stats.sharedHits = hits(in: "shared")
        if var shared = shared?.snapshot {
            shared.claimsWon = thumbs.counters.claimsWon
            shared.claimsWaited = thumbs.counters.claimsWaited
            shared.claimsUnavailable = thumbs.counters.claimsUnavailable
            shared.ownerAsks = thumbs.counters.ownerAsks
            shared.ownerUnreachable = thumbs.counters.ownerUnreachable
            stats.shared = shared
        }
        return stats
    }

    /// Where the process's memory goes: every part that can be counted.
    private func memoryUse(thumbs: ThumbnailSnapshot, pages: Int) -> CacheStats.MemoryUse {
        let process = ProcessMemory.now()
        let connections = server.withLock { server in server.map { $0.connections.held * $0.connectionMemoryLimit } } ?? 0
        return CacheStats.MemoryUse(
            rssBytes: process.residentBytes ?? Self.residentBytes(), thumbnailsBytes: thumbs.bytes, originalsBytes: thumbs.originalBytes,
            pagesBytes: pages, diskIndexBytes: thumbs.disk.indexBytes, diskIndexBudgetBytes: thumbs.disk.indexBudget,
            sqliteBytes: SQLiteFeedStore.memoryInUse, demoOriginBytes: demo?.keptBytes ?? 0,
            connectionsBytes: connections, originalsIndexBytes: thumbs.originalsOnDisk.indexBytes,
            anonymousBytes: process.anonymousBytes, fileBytes: process.fileBytes, threads: process.threads,
            allocator: Allocator.usage
        )
    }

    /// The process's resident set size, from /proc/self/statm (Linux); nil elsewhere.
    static func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * sysconf(Int32(_SC_PAGESIZE))
    }

    /// Takes one sample for the chart: the hit ratio of the requests since the last sample.
    func sample() {
        let stats = stats()
        let requests = stats.hits + stats.misses + stats.coalesced + stats.negativeHits
        samples.withLock { history in
            let asked = requests - history.lastRequests
            let ratio: Double? = asked > 0 ? Double(stats.hits - history.lastHits) / Double(asked) : nil
            (history.lastHits, history.lastRequests) = (stats.hits, requests)
            history.hitRatio.append(time: stats.uptimeSeconds, value: ratio)
            history.originP50.append(time: stats.uptimeSeconds, value: stats.origin.latency.p50Ms)
        }
    }

    /// The Prometheus text for a scrape: gauges set to what is held now.
    /// A scrape adds nothing to the dashboard's chart.
    func scrape() -> [UInt8] {
        metrics.setGauges(from: stats())
        return metrics.text()
    }

    func run() async throws {
        try? await cancelWhenGracefulShutdown { [self] in
            while true {
                sample()
                // Renderings evicted from a page-cache stripe not written since are let go,
                // then free pages the allocator holds go back to the system, every sample.
                pages.reclaim()
                Allocator.trim()
                try await Task.sleep(for: interval)
            }
        }
    }
}
