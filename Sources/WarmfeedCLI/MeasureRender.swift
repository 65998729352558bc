import ArgumentParser
import Foundation
import Warmfeed

/// `warmfeed measure-render`: cold read and render time per page, for `bench/`.
struct MeasureRender: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "measure-render",
        abstract: "Measure cold page rendering (store read + Mustache render, no cache) on an existing data folder.",
        discussion: "Prints one JSON line: medians and 90th percentiles in microseconds."
    )

    @Option(help: "The data folder holding feed.sqlite (seed it first with `serve --demo-items`).")
    var data = "./data"

    @Option(name: .customLong("page-size"), help: "Items per page.")
    var pageSize = 30

    @Option(help: "How many random pages to render.")
    var pages = 500

    @Option(name: .customLong("public"), help: "The thin client's folder.")
    var publicFolder = "Public"

    @Option(help: "The Mustache templates' folder.")
    var templates = "Templates"

    func run() async throws {
        var configuration = WarmfeedConfiguration()
        configuration.dataFolder = data
        configuration.pageSize = pageSize
        configuration.publicFolder = publicFolder
        configuration.templatesFolder = templates
        let result = try await RenderTiming.measure(configuration: configuration, pages: pages)
        func percentile(_ values: [Double], _ p: Double) -> Double {
            let sorted = values.sorted()
            return sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
        }
        let line = String(
            format: #"{"pages": %d, "page_size": %d, "store_median_us": %.1f, "store_p90_us": %.1f, "render_median_us": %.1f, "render_p90_us": %.1f}"#,
            result.renderMicros.count, pageSize,
            percentile(result.storeMicros, 0.5), percentile(result.storeMicros, 0.9),
            percentile(result.renderMicros, 0.5), percentile(result.renderMicros, 0.9)
        )
        print(line)
    }
}
