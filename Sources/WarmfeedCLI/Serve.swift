import ArgumentParser
import FeedImport
import FeedIngest
import Foundation
import Logging
import Operations
import Reckoning
import ServiceLifecycle
import SystemMemory
import Warmfeed
import WarmfeedCore
import Workers

/// `warmfeed serve`: runs the feed server until SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the feed over HTTP.",
        discussion: """
            With an empty data folder, a demo feed is seeded so the server shows a real feed at once. \
            Stop with Ctrl-C or SIGTERM: new connections are refused and requests in flight finish.
            """
    )

    @OptionGroup var feed: FeedOptions

    @Option(help: "The IPv4 address to listen on.")
    var host = defaults.http.host

    @Option(help: "The port to listen on (0 picks a free one and prints it).")
    var port = defaults.http.port

    @Option(help: "Where the sentinel sits on each page, as a share of that page's rows (above 0, at most 1).")
    var threshold = defaults.pages.threshold

    @Option(name: .customLong("demo-items"), help: "Demo items seeded into an empty store (0 for none).")
    var demoItems = defaults.demoItems

    @Option(name: .customLong("page-cache-mb"), help: "Memory for rendered pages, in MiB.")
    var pageCacheMB = defaults.pages.cacheBytes >> 20

    @Option(name: .customLong("cache-mb"), help: "Memory for thumbnails, in MiB (least recently used out first).")
    var cacheMB = defaults.thumbnails.memoryBytes >> 20

    @Option(
        name: .customLong("originals-mb"),
        help: "Memory for originals, in MiB: half kept after a resize for an item's other size, half for those fetched and waiting for libvips.")
    var originalsMB = defaults.thumbnails.originalsBytes >> 20

    @Option(
        name: .customLong("decode-mb"),
        help:
            "Memory libvips may hold at once to decode pictures, in MiB, estimated from each picture's header before decoding; decodes wait for room, and a picture that needs more than all of it gets its placeholder."
    )
    var decodeMB = defaults.thumbnails.decodeBytes >> 20

    @Option(name: .customLong("disk-cache-mb"), help: "Disk for thumbnails in the data folder, in MiB; survives restarts.")
    var diskCacheMB = defaults.thumbnails.diskBytes >> 20

    @Option(
        name: .customLong("originals-disk-mb"),
        help: "Disk for originals kept after their fetch, in MiB, so an item's later sizes and formats need no second fetch (0: none kept).")
    var originalsDiskMB = defaults.thumbnails.originalsDiskBytes >> 20

    @Option(
        name: .customLong("disk-index-mb"),
        help: "Memory for the index of the thumbnails on disk, in MiB (about 24,000 thumbnails a MiB; past it the least recently used file goes).")
    var diskIndexMB = defaults.thumbnails.diskIndexBytes >> 20

    @Option(help: "Pages warmed ahead of each reader (0 turns pre-warm off).")
    var prewarm = defaults.prewarm.pages

    @Option(name: .customLong("origin-latency"), help: "The demo origin's latency in milliseconds (jittered ±20%).")
    var originLatency = Int(defaults.originLatency.wholeMilliseconds)

    @Option(
        name: .customLong("demo-pool"),
        help:
            "The folder of the demo origin's originals, painted once before it listens (default: demo-origin/pool in the data folder; data folders may share one)."
    )
    var demoPool: String?

    @Option(
        name: .customLong("origin-timeout"), help: "Seconds an origin fetch may take on the wire, once it has a connection, before the placeholder is served.")
    var originTimeout = Int(defaults.originTimeout.components.seconds)

    @Option(name: .customLong("origin-stall"), help: "Seconds an origin may send under 512 bytes a second (its first byte included) before it is cut.")
    var originStall = Int(defaults.originStall.components.seconds)

    @Option(
        name: .customLong("thumb-wait"),
        help: "Seconds a thumbnail request waits for its thumbnail; then the box is answered empty and the job goes on for the next reader.")
    var thumbWait = Int(defaults.thumbnails.answerWithin.components.seconds)

    @Option(name: .customLong("origin-connections"), help: "Connections open at once to one origin host; more fetches wait for one, readers' first.")
    var originConnections = defaults.originConnections

    @Option(
        help: ArgumentHelp(
            "A source of the river, given as many times as you like: a feed (http(s) URL or file), a folder of images, or a list of them (OPML, or one a line; a file or a URL). Lists are read again on each --refresh and on SIGHUP; a source taken out of a list leaves the river with its items. No demo feed is seeded then.",
            valueName: "source"))
    var source: [String] = []

    @Option(
        help: ArgumentHelp(
            "Each source's interval between polls and how often lists are read again, e.g. 30s, 10m, 1h; a feed's Cache-Control, Expires and ttl may lengthen it (URL sources are polled with ETag/Last-Modified).",
            valueName: "interval")
    )
    var refresh: RefreshInterval?

    @Option(name: .customLong("source-max-mb"), help: "The largest feed document a poll downloads, in MiB.")
    var sourceMaxMB = SourcesConfiguration(specs: [], refresh: nil).maxBytes >> 20

    @Option(
        help: ArgumentHelp(
            "The shared thumbnail tier of a cluster, redis://[:password@]host:port/db; also WARMFEED_REDIS (keeps the password out of the process list). Without it every tier is this process's own.",
            valueName: "url")
    )
    var redis: String?

    @Option(
        name: .customLong("peer"),
        help: ArgumentHelp(
            "A node of the cluster this one may ask for the sizes of an original it fetched, e.g. http://node2:8080; repeat for each (this node may be among them); also WARMFEED_PEERS, separated by spaces or commas. An owner in Redis naming any other address is not asked.",
            valueName: "url"))
    var peers: [String] = []

    @Option(
        name: .customLong("demo-origin"),
        help: ArgumentHelp(
            "The demo origin of a cluster (`warmfeed origin`), e.g. http://origin:8090; without it the demo origin runs inside this process.", valueName: "url")
    )
    var demoOrigin: String?

    @Option(
        name: .customLong("allow-origin"),
        help: ArgumentHelp(
            "A host (HOST or HOST:PORT) or network (CIDR, or one address) a feed's images may be fetched from besides public addresses, e.g. 10.0.0.0/8 or images.internal; repeatable. Without it loopback, private, link-local and the other special addresses are refused.",
            valueName: "host|cidr"))
    var allowOrigin: [String] = []

    @Option(name: .customLong("node-name"), help: "This server's name in a cluster, for the admin view and the logs (default: the host name).")
    var nodeName: String?

    @Option(
        help: ArgumentHelp(
            "This node's address as the other nodes of a cluster reach it, e.g. http://node1:8080 (they ask it for the sizes of the originals it fetched); default http://HOST:PORT as bound, the node name for HOST on 0.0.0.0.",
            valueName: "url"))
    var advertise: String?

    @Option(
        name: .customLong("trusted-proxy"),
        help: ArgumentHelp(
            "A proxy in front of this server (an IPv4 address or network, e.g. 172.16.0.0/12; repeat for more): admin sign-ins through it are counted against the client its X-Forwarded-For names. Default: none.",
            valueName: "network"))
    var trustedProxies: [String] = []

    @Option(help: "HTTP worker threads; the default is one per core the process can use (its CPU affinity and cgroup CPU quota counted).")
    var threads = defaults.http.threads

    @Option(name: .customLong("max-connections"), help: "Connections held open at once; past it, the one waiting longest for a request head makes room.")
    var maxConnections = defaults.http.connectionLimit

    @Option(name: .customLong("max-connections-per-address"), help: "Connections one client address may hold; past it, its own longest-waiting one makes room.")
    var maxConnectionsPerAddress = defaults.http.connectionsPerAddress

    @Option(name: .customLong("head-timeout"), help: "Seconds a connection has to send a whole request head (also the keep-alive idle time).")
    var headTimeout = defaults.http.headTimeout

    @Option(name: .customLong("idle-timeout"), help: "Seconds an idle connection is kept.")
    var idleTimeout = defaults.http.idleTimeout

    @Option(
        name: .customLong("log-level"),
        help: ArgumentHelp("What goes to standard error: debug adds each source read and each poll's result.", valueName: "level"))
    var logLevel = LogLevel.info

    func run() async throws {
        // SIGHUP rereads the source lists once the server runs; until then (and for ever
        // without a source) it must not end the process, as its default action would.
        signal(SIGHUP, SIG_IGN)
        // An arena for each server thread, the HTTP workers' and the handlers' (they allocate on every
        // request), up to two a core the process can use (Allocator.arenas).
        Allocator.configure(
            arenas: Allocator.arenas(serverThreads: threads + WarmfeedConfiguration().http.handlerThreads, cores: UsableCores.count))
        LoggingSystem.bootstrap { [logLevel] label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = logLevel.level
            return handler
        }
        let logger = Logger(label: "warmfeed")
        var configuration = WarmfeedConfiguration()
        configuration.http.host = host
        configuration.http.port = port
        configuration.http.threads = threads
        configuration.http.connectionLimit = maxConnections
        configuration.http.idleTimeout = idleTimeout
        configuration.http.connectionsPerAddress = maxConnectionsPerAddress
        configuration.http.headTimeout = headTimeout
        feed.apply(to: &configuration)
        configuration.pages.threshold = threshold
        configuration.demoItems = demoItems
        configuration.pages.cacheBytes = pageCacheMB << 20
        configuration.thumbnails.memoryBytes = cacheMB << 20
        configuration.thumbnails.originalsBytes = originalsMB << 20
        configuration.thumbnails.decodeBytes = decodeMB << 20
        configuration.thumbnails.diskBytes = diskCacheMB << 20
        configuration.thumbnails.originalsDiskBytes = originalsDiskMB << 20
        configuration.advertisedAddress = advertise
        configuration.thumbnails.diskIndexBytes = diskIndexMB << 20
        configuration.prewarm.pages = prewarm
        configuration.originLatency = .milliseconds(originLatency)
        configuration.originTimeout = .seconds(originTimeout)
        configuration.originStall = .seconds(originStall)
        configuration.thumbnails.answerWithin = .seconds(thumbWait)
        configuration.originConnections = originConnections
        configuration.demoPoolFolder = demoPool
        configuration.sources = source
        configuration.refreshInterval = refresh?.duration
        configuration.sourceMaxBytes = sourceMaxMB << 20
        configuration.redis = redis ?? ProcessInfo.processInfo.environment["WARMFEED_REDIS"].flatMap { $0.isEmpty ? nil : $0 }
        configuration.peers =
            peers.isEmpty
            ? (ProcessInfo.processInfo.environment["WARMFEED_PEERS"] ?? "").split(whereSeparator: { $0 == "," || $0.isWhitespace }).map(String.init)
            : peers
        configuration.demoOrigin = demoOrigin
        configuration.allowedOrigins = allowOrigin
        configuration.trustedProxies = trustedProxies
        if let nodeName { configuration.nodeName = nodeName }
        do {
            try configuration.validate()
        } catch {
            throw ValidationError(error.description)
        }
        for spec in source {
            do throws(ImportError) {
                _ = try ImportSource(spec)
            } catch {
                throw ValidationError("--source: \(error)")
            }
        }
        guard (1...4096).contains(sourceMaxMB) else { throw ValidationError("--source-max-mb must be from 1 to 4096") }
        let app: WarmfeedApp
        do {
            app = try await WarmfeedApp(configuration: configuration, logger: logger)
        } catch let error as StoreUnavailable {
            printError("warmfeed serve: cannot open the feed store: \(error)")
            throw ExitCode(2)
        } catch let error as StoreSchemaError {
            printError("warmfeed serve: \(error)")
            throw ExitCode(2)
        } catch let error as ConfigurationError {
            // What only the start finds out (the token kept in the data folder): a configuration error all the same.
            throw ValidationError(error.description)
        }
        if !source.isEmpty {
            // Poll before listening, so the first reader finds the river; a failure is
            // logged and the server still starts on what the store holds.
            let results = await app.importSources()
            let imported = results.compactMap { try? $0.get() }.filter { !$0.notModified && !$0.refused }
            if imported.count <= 3 {
                for report in imported { for line in report.summaryLines { print(line) } }
            } else {
                let items = imported.reduce(0) { $0 + $1.written.inserted }
                print("\(imported.count) sources imported, \(items) new items")
            }
            let failed = results.count { if case .failure = $0 { true } else { false } }
            if failed > 0 { print("\(failed) source\(failed == 1 ? "" : "s") could not be polled; see /admin/sources") }
        }
        try app.start()
        // The address is printed once the group traps SIGTERM (it does so before it starts its
        // services): whoever reads it and stops the server at once gets a clean stop, not a kill.
        let announcement = Announcement(lines: [
            "Warmfeed is serving http://\(host):\(app.port)/",
            "Admin: http://\(host):\(app.port)/admin (sign in with the token from \(app.adminToken.source))",
            "HTTP workers: \(threads) (cores this process can use: \(UsableCores.count))",
        ])
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: app.services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) } + [
                    .init(service: announcement, successTerminationBehavior: .ignore)
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await group.run()
    }
}

/// Prints the lines that say where the server listens, and ends.
private struct Announcement: Service {
    let lines: [String]

    func run() async {
        for line in lines { print(line) }
        fflush(nil)  // the port matters to whoever started us; do not leave it in a pipe buffer
    }
}
