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

    /// The thumbnails' and pre-warm's events are counted once, by their
    /// machines, and `/metrics` reads them from the stats under their old
    /// names: nothing else raises them, so they are what `/admin/cache` says.
    @Test func eventsAreTheCountsTheStatsHoldUnderTheirOwnNames() {
        let metrics = WarmfeedMetrics()
        var stats = CacheStats()
        (stats.hits, stats.misses, stats.coalesced, stats.negativeHits) = (7, 3, 2, 1)
        (stats.resizes, stats.origin.fetches, stats.origin.errors) = (3, 4, 1)
        (stats.prewarm.done, stats.prewarm.cancelled, stats.prewarm.dropped) = (9, 2, 0)
        metrics.record(from: stats)
        let text = String(decoding: metrics.text(), as: UTF8.self)
        let expected: [(String, Double)] = [
            ("warmfeed_thumbnail_hits_total", 7), ("warmfeed_thumbnail_misses_total", 3), ("warmfeed_thumbnail_coalesced_total", 2),
            ("warmfeed_thumbnail_negative_hits_total", 1), ("warmfeed_thumbnail_resizes_total", 3),
            ("warmfeed_thumbnail_origin_fetches_total", 4), ("warmfeed_thumbnail_origin_errors_total", 1),
            ("warmfeed_thumbnail_prewarm_done_total", 9), ("warmfeed_thumbnail_prewarm_cancelled_total", 2),
        ]
        for (name, value) in expected {
            #expect(Self.series(name, in: text) == ("counter", value), "\(name)")
        }
        // Each is declared once: no second counter of the same event beside it.
        for (name, _) in expected {
            #expect(text.components(separatedBy: "# TYPE \(name) ").count == 2, "\(name) declared once")
        }
    }

    @Test func eachNameIsEitherAGaugeOrACounterOnce() {
        let names = CacheStats.numbers.map(\.name)
        #expect(Set(names).count == names.count, "a name listed twice")
    }

    /// Every gauge and counter of `CacheStats.numbers` is a series of its
    /// kind, with the value the stats hold; words are none.
    @Test func everyNumberOfTheStatsIsASeriesOfItsKind() {
        let metrics = WarmfeedMetrics()
        var stats = CacheStats()
        stats.shared = CacheStats.Shared()
        stats.shared?.claimsWon = 6
        stats.decode.refused = 2
        stats.origin.latency.p50Ms = 250
        metrics.record(from: stats)
        let text = String(decoding: metrics.text(), as: UTF8.self)
        for number in CacheStats.numbers {
            let series = Self.series("warmfeed_\(number.name)", in: text)
            switch number.kind {
            case .gauge: #expect(series.type == "gauge", "\(number.name)")
            case .counter: #expect(series.type == "counter", "\(number.name)")
            case .words: #expect(series.type == nil, "\(number.name) is words, not a series")
            }
        }
        #expect(Self.series("warmfeed_shared_claims_won", in: text).value == 6)
        #expect(Self.series("warmfeed_decode_refused", in: text).value == 2)
        #expect(Self.series("warmfeed_origin_latency_p50_seconds", in: text).value == 0.25)
    }
}
