import ArgumentParser
import DemoOrigin
import Foundation
import Logging
import ServiceLifecycle
import Warmfeed

/// `warmfeed origin`: the demo origin as a service of its own, so the nodes of
/// a cluster (`warmfeed serve --demo-origin URL`) share one origin, as in real
/// life, and its request count (`GET /stats`) shows any work done twice.
struct Origin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the demo feed's originals for a cluster of servers.",
        discussion: """
            Serves GET /originals/<n>.<ext>?w=&h= after the set latency, GET /stats (originals asked for, in all \
            and each, as JSON) and GET /health. Its pictures are painted once into the data folder before it listens. \
            Stop with Ctrl-C or SIGTERM.
            """
    )

    @Option(help: "The IPv4 address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (0 picks a free one and prints it).")
    var port = 8090

    @Option(help: "The folder for the originals (created when missing).")
    var data = "data-origin"

    @Option(name: .customLong("demo-pool"), help: "The folder of the pictures, painted once (default: pool in the data folder).")
    var demoPool: String?

    @Option(help: "Latency in milliseconds (jittered ±20%), like a distant image host.")
    var latency = 250

    @Option(help: "HTTP worker threads.")
    var threads = 2

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
        guard (0...60_000).contains(latency) else { throw ValidationError("--latency must be from 0 to 60000 ms") }
        guard (1...64).contains(threads) else { throw ValidationError("--threads must be from 1 to 64") }
    }

    func run() async throws {
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        let logger = Logger(label: "warmfeed-origin")
        let origin = try DemoOrigin(
            folder: URL(fileURLWithPath: data, isDirectory: true), poolFolder: demoPool.map { URL(fileURLWithPath: $0, isDirectory: true) },
            latency: .milliseconds(latency), host: host, port: port, threads: threads, logger: logger
        )
        let painted = try await origin.preparePool()
        if painted > 0 { logger.info("painted the demo pictures", metadata: ["count": "\(painted)"]) }
        try origin.start()
        print("Warmfeed origin is serving http://\(host):\(origin.port)/")
        fflush(nil)
        let group = ServiceGroup(services: [origin], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        try await group.run()
    }
}
