import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import Warmfeed

/// `warmfeed serve`: runs the feed server until SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the feed over HTTP.",
        discussion: """
            With an empty data folder, a demo feed is seeded so the server shows a real feed at once. \
            Stop with Ctrl-C or SIGTERM: new connections are refused and requests in flight finish.
            """
    )

    @Option(help: "The IPv4 address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (0 picks a free one and prints it).")
    var port = 8080

    @Option(help: "The folder for the SQLite store; created when missing.")
    var data = "./data"

    @Option(name: .customLong("page-size"), help: "Items per page (1–1000).")
    var pageSize = 30

    @Option(help: "Where the sentinel sits on each page, as a share of that page's rows (above 0, at most 1).")
    var threshold = 0.7

    @Option(name: .customLong("public"), help: "The thin client's folder, served under /static/.")
    var publicFolder = "Public"

    @Option(help: "The Mustache templates' folder.")
    var templates = "Templates"

    @Option(name: .customLong("demo-items"), help: "Demo items seeded into an empty store (0 for none).")
    var demoItems = 10_000

    @Option(name: .customLong("page-cache-mb"), help: "Memory for rendered pages, in MiB.")
    var pageCacheMB = 64

    @Option(help: "HTTP worker threads (default: one per core).")
    var threads = ProcessInfo.processInfo.activeProcessorCount

    @Option(name: .customLong("max-connections"), help: "Connections held open at once.")
    var maxConnections = 4096

    @Option(name: .customLong("idle-timeout"), help: "Seconds an idle connection is kept.")
    var idleTimeout = 15

    func run() async throws {
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        let logger = Logger(label: "warmfeed")
        var configuration = WarmfeedConfiguration()
        configuration.http.host = host
        configuration.http.port = port
        configuration.http.threads = threads
        configuration.http.connectionLimit = maxConnections
        configuration.http.idleTimeout = idleTimeout
        configuration.dataFolder = data
        configuration.pageSize = pageSize
        configuration.threshold = threshold
        configuration.publicFolder = publicFolder
        configuration.templatesFolder = templates
        configuration.demoItems = demoItems
        configuration.pageCacheBytes = pageCacheMB << 20
        do {
            try configuration.validate()
        } catch {
            throw ValidationError(error.description)
        }
        let app = try await WarmfeedApp(configuration: configuration, logger: logger)
        try app.start()
        print("Warmfeed is serving http://\(host):\(app.port)/")
        fflush(nil)  // the port matters to whoever started us; do not leave it in a pipe buffer
        let group = ServiceGroup(
            services: [app],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        try await group.run()
    }
}
