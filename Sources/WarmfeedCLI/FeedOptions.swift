import ArgumentParser
import Foundation
import Warmfeed

/// The options that say where the feed is and how it is paged, shared by every command.
struct FeedOptions: ParsableArguments {
    @Option(help: "The data folder (the SQLite store, thumbnails on disk, the demo origin's pictures); created when missing.")
    var data = "./" + defaults.dataFolder

    @Option(
        help: ArgumentHelp(
            "The feed store: sqlite:PATH (default: feed.sqlite in the data folder) or postgres://user:password@host:port/database; also WARMFEED_STORE.",
            valueName: "url"))
    var store: String?

    @Option(name: .customLong("page-size"), help: "Items per page (1–1000).")
    var pageSize = defaults.pages.size

    @Option(name: .customLong("public"), help: "The thin client's folder, served under /static/.")
    var publicFolder = defaults.publicFolder

    @Option(help: "The Mustache templates' folder.")
    var templates = defaults.templatesFolder

    /// Copies these options into `configuration`.
    func apply(to configuration: inout WarmfeedConfiguration) {
        configuration.dataFolder = data
        configuration.store = store ?? storeFromEnvironment
        configuration.pages.size = pageSize
        configuration.publicFolder = publicFolder
        configuration.templatesFolder = templates
    }
}

/// The store WARMFEED_STORE names, when `--store` does not.
/// Every option's default, stated once in the configuration types
/// (`WarmfeedConfiguration`, `HTTPServerConfiguration`): the options show
/// them in `--help`, and a test checks the README's options table against
/// that help (`Tests/browser/test_options_table.py`).
let defaults = WarmfeedConfiguration()

var storeFromEnvironment: String? {
    ProcessInfo.processInfo.environment["WARMFEED_STORE"].flatMap { $0.isEmpty ? nil : $0 }
}
