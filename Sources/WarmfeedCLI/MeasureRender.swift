import ArgumentParser
import Foundation
import Warmfeed
import WarmfeedCore

/// `warmfeed measure-render`: cold read and render time per page, for `bench/`.
struct MeasureRender: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "measure-render",
        abstract: "Measure cold page rendering (store read + Mustache render, no cache) on an existing data folder.",
        discussion: "Prints one JSON line: medians and 90th percentiles in microseconds."
    )

    @OptionGroup var feed: FeedOptions

    @Option(help: "How many random pages to render.")
    var pages = 500

    @Option(help: "The gzip level to measure (1-9; the server's own level by default).")
    var gzipLevel: Int32?

    func run() async throws {
        var configuration = WarmfeedConfiguration()
        feed.apply(to: &configuration)
        if let gzipLevel, !(1...9).contains(gzipLevel) { throw ValidationError("--gzip-level must be from 1 to 9") }
        do {
            try configuration.validate()
        } catch {
            throw ValidationError(error.description)
        }
        let result: RenderTiming.Result
        do {
            result = try await RenderTiming.measure(configuration: configuration, pages: pages, gzipLevel: gzipLevel)
        } catch let error as StoreUnavailable {
            printError("warmfeed measure-render: cannot open the feed store: \(error)")
            throw ExitCode(2)
        }
        func percentile(_ values: [Double], _ p: Double) -> Double {
            let sorted = values.sorted()
            return sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
        }
        let line = String(
            format: #"{"pages": %d, "page_size": %d, "store_median_us": %.1f, "store_p90_us": %.1f, "render_median_us": %.1f, "render_p90_us": %.1f, "gzip_median_us": %.1f, "gzip_p90_us": %.1f, "plain_median_bytes": %.0f, "gzip_median_bytes": %.0f}"#,
            result.renderMicros.count, feed.pageSize,
            percentile(result.storeMicros, 0.5), percentile(result.storeMicros, 0.9),
            percentile(result.renderMicros, 0.5), percentile(result.renderMicros, 0.9),
            percentile(result.gzipMicros, 0.5), percentile(result.gzipMicros, 0.9),
            percentile(result.plainBytes.map(Double.init), 0.5), percentile(result.gzipBytes.map(Double.init), 0.5)
        )
        print(line)
    }
}
