import Foundation
import HTTPServer
import ServiceLifecycle
import Synchronization
import SystemMemory
import WarmfeedCore

/// Gathers every part's numbers for the operator's views (each part fills its
/// own sections: `StatsPublisher`), adds the process's and the HTTP server's,
/// keeps a few minutes of history for the dashboard's chart (sampled on its
/// own clock, never by a scrape), and sets `/metrics`' gauges when scraped.
package final class CacheObserver: Service, Sendable {
    /// The parts that show their numbers, asked in this order.
    let publishers: [any StatsPublisher]
    let node: String
    let metrics: WarmfeedMetrics
    let clock: Uptime
    /// Run after each sample: the parts' own upkeep on the same clock.
    let upkeep: @Sendable () -> Void
    /// Hit ratio and origin p50 (ms), sampled every `interval`, with the counts
    /// of the last sample (the ratio is of the requests between two samples).
    private let samples = Mutex(History())
    let interval: Duration
    /// The HTTP server whose connections it shows (made before this observer, and before its routes).
    let server: HTTPServer?

    struct History {
        var hitRatio = TimeSeries(capacity: 120)
        var originP50 = TimeSeries(capacity: 120)
        var lastHits = 0
        var lastRequests = 0
    }

    package init(
        publishers: [any StatsPublisher], server: HTTPServer? = nil, node: String = "", metrics: WarmfeedMetrics, clock: Uptime,
        interval: Duration = .seconds(5), upkeep: @escaping @Sendable () -> Void = {}
    ) {
        self.publishers = publishers
        self.server = server
        self.node = node
        self.metrics = metrics
        self.clock = clock
        self.interval = interval
        self.upkeep = upkeep
    }

    var uptime: Double { clock.now }

    /// The dashboard's series so far.
    package var history: (hitRatio: TimeSeries, originP50: TimeSeries) {
        samples.withLock { ($0.hitRatio, $0.originP50) }
    }

    /// The numbers now.
    func stats() -> CacheStats {
        var stats = CacheStats()
        stats.uptimeSeconds = uptime
        stats.node = node
        for publisher in publishers { publisher.publish(into: &stats) }
        let (connections, memoryLimit) = (server?.connections ?? ConnectionCounts(), server?.connectionMemoryLimit ?? 0)
        stats.connections = connections
        stats.memoryUse.connectionsBytes = connections.held * memoryLimit
        let process = ProcessMemory.now()
        stats.memoryUse.rssBytes = process.residentBytes ?? Self.residentBytes()
        (stats.memoryUse.anonymousBytes, stats.memoryUse.fileBytes, stats.memoryUse.threads) = (process.anonymousBytes, process.fileBytes, process.threads)
        stats.memoryUse.allocator = Allocator.usage
        return stats
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

    /// The Prometheus text for a scrape: gauges set to what is held now,
    /// counters raised by what was counted since the scrape before.
    /// A scrape adds nothing to the dashboard's chart.
    func scrape() -> [UInt8] {
        metrics.record(from: stats())
        return metrics.text()
    }

    package func run() async throws {
        try? await cancelWhenGracefulShutdown { [self] in
            while true {
                sample()
                // The parts' upkeep (renderings a page-cache stripe let go of are freed),
                // then free pages the allocator holds go back to the system, every sample.
                upkeep()
                Allocator.trim()
                try await Task.sleep(for: interval)
            }
        }
    }
}
