import Testing
import WarmfeedCore

@testable import Operations

/// `/metrics` as Prometheus reads it: a number that only rises is a counter,
/// raised by what it rose since the last scrape; a level is a gauge.
@Suite struct WarmfeedMetricsTests {
    /// The value of series `name` in `text`, and its declared type.
    static func series(_ name: String, in text: String) -> (type: String?, value: Double?) {
        var type: String?
        var value: Double?
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ")
            if words.count == 4, words[1] == "TYPE", words[2] == name { type = String(words[3]) }
            if words.count == 2, words[0] == name { value = Double(words[1]) }
        }
        return (type, value)
    }

    @Test func runningCountsAreCountersThatNeverGoDownAndLevelsAreGauges() {
        let metrics = WarmfeedMetrics()
        var stats = CacheStats()
        stats.pageHits = 5
        stats.memory.entries = 40
        metrics.record(from: stats)
        var text = String(decoding: metrics.text(), as: UTF8.self)
        #expect(Self.series("warmfeed_page_cache_hits", in: text) == ("counter", 5))
        #expect(Self.series("warmfeed_memory_entries", in: text) == ("gauge", 40))

        stats.pageHits = 8
        stats.memory.entries = 10
        metrics.record(from: stats)
        text = String(decoding: metrics.text(), as: UTF8.self)
        #expect(Self.series("warmfeed_page_cache_hits", in: text).value == 8)
        #expect(Self.series("warmfeed_memory_entries", in: text).value == 10)

        // A count that went down (a part started again) raises nothing, and counts on from there.
        stats.pageHits = 2
        metrics.record(from: stats)
        #expect(Self.series("warmfeed_page_cache_hits", in: String(decoding: metrics.text(), as: UTF8.self)).value == 8)
        stats.pageHits = 5
        metrics.record(from: stats)
        #expect(Self.series("warmfeed_page_cache_hits", in: String(decoding: metrics.text(), as: UTF8.self)).value == 11)
    }

    @Test func eachNameIsEitherAGaugeOrACounterOnce() {
        let names = WarmfeedMetrics.gaugeValues.map(\.name) + WarmfeedMetrics.counterValues.map(\.name)
        #expect(Set(names).count == names.count, "a name listed twice")
    }
}
