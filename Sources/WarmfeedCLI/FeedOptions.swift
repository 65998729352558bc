import ArgumentParser
import Warmfeed

/// The options that say where the feed is and how it is paged, shared by every command.
struct FeedOptions: ParsableArguments {
    @Option(help: "The folder for the SQLite store; created when missing.")
    var data = "./data"

    @Option(name: .customLong("page-size"), help: "Items per page (1–1000).")
    var pageSize = 30

    @Option(name: .customLong("public"), help: "The thin client's folder, served under /static/.")
    var publicFolder = "Public"

    @Option(help: "The Mustache templates' folder.")
    var templates = "Templates"

    /// Copies these options into `configuration`.
    func apply(to configuration: inout WarmfeedConfiguration) {
        configuration.dataFolder = data
        configuration.pageSize = pageSize
        configuration.publicFolder = publicFolder
        configuration.templatesFolder = templates
    }
}
