import CoreMetrics
import Prometheus
import Synchronization
import WarmfeedCore

/// The Prometheus view of the cache (`GET /metrics`), through swift-metrics.
///
/// Each number is counted once, by the part it belongs to (the thumbnail
/// machine, pre-warm's planner, the page cache, the server's connections),
/// named once in that part's list of `CacheStats.numbers`, and read from the
/// stats they publish when `/metrics` is scraped: gauges
/// (what is held now) are set, counters (what only rises) are raised by the
/// difference, so they are Prometheus counters, not gauges of running
/// counts. Only the two timings are recorded where they happen (an
/// original's fetch, a thumbnail's resize: histograms).
/// Each app has its own registry (no global bootstrap), so several servers in
/// one process (the tests) keep their numbers apart.
package final class WarmfeedMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    /// Where the thumbnails record their two timers (`ThumbnailMetrics`), into `registry`.
    package let factory: PrometheusMetricsFactory
    private let gauges: [(gauge: CoreMetrics.Gauge, number: StatNumber)]
    private let counters: [(counter: CoreMetrics.Counter, number: StatNumber)]
    /// Each counter's value at the scrape before (scrapes may come at once: one at a time here).
    private let counted: Mutex<[Int]>

    /// A series of each gauge and counter of the stats, named as the feature
    /// that keeps it names it (`CacheStats.numbers`); words are the dashboard's.
    package init() {
        let factory = PrometheusMetricsFactory(registry: registry)
        self.factory = factory
        let numbers = CacheStats.numbers
        gauges = numbers.filter { $0.kind == .gauge }.map { (CoreMetrics.Gauge(label: "warmfeed_\($0.name)", factory: factory), $0) }
        counters = numbers.filter { $0.kind == .counter }.map { (CoreMetrics.Counter(label: "warmfeed_\($0.name)", factory: factory), $0) }
        counted = Mutex([Int](repeating: 0, count: counters.count))
    }

    // MARK: Scrapes

    /// Sets the gauges (what is held now) from `stats`, and raises each
    /// counter by what its count rose since the scrape before. A count that
    /// went down (a part started again) raises nothing and is the new base.
    func record(from stats: CacheStats) {
        for (gauge, number) in gauges {
            if let value = number.number(in: stats) { gauge.record(value) }
        }
        counted.withLock { last in
            for (index, (counter, number)) in counters.enumerated() {
                guard let now = number.number(in: stats).map(Int.init) else { continue }
                if now > last[index] { counter.increment(by: Int64(now - last[index])) }
                last[index] = now
            }
        }
    }

    /// The Prometheus text exposition.
    func text() -> [UInt8] {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return buffer
    }
}
