import DemoOrigin
import FeedImport
import FeedIngest
import FeedPages
import Foundation
import HTTPServer
import Logging
import Operations
import OriginFetcher
import Prewarm
import RedisClient
import ServiceLifecycle
import Thumbnailer
import Thumbnails
import WarmfeedCore

/// The whole server, assembled: store, page service, thumbnail cache,
/// pre-warmer, demo origin, source poller and admin views on one HTTP
/// server. It builds the parts and wires them; it runs nothing itself. The
/// long-lived parts are `services`, which `warmfeed serve` (and the tests) run
/// in one `ServiceGroup`, so SIGTERM reaches every one of them.
public final class WarmfeedApp: Sendable {
    /// The HTTP server (read `port` after `start()`).
    public let server: HTTPServer
    /// The feed store.
    public let store: any FeedStore
    /// The admin token.
    public let adminToken: AdminToken
    let clock: Uptime
    let pages: PageService
    let thumbnails: ThumbnailService
    let prewarmer: Prewarmer
    let observer: CacheObserver
    let fetcher: OriginFetcher
    let demo: DemoOrigin?
    /// The cluster's shared thumbnail tier, with `--redis`.
    let shared: SharedTier?
    /// This node's address as the cluster's other nodes reach it.
    let address: NodeAddress
    /// The nodes an owner record in Redis may name (`--peer`).
    let peers: KnownPeers
    let nodeName: String
    let previews: PreviewKeeper
    /// Renders rows ahead into the store.
    let rows: RowPreparation
    /// Polls the configured sources, when there are any.
    let poller: SourcePoller?
    /// The feeds' own fetcher, with sources.
    let feedFetcher: OriginFetcher?
    /// Rereads the lists on SIGHUP, with sources.
    let sighup: SourceListSignal?
    let logger: Logger

    /// Opens the store (seeding the demo feed into an empty one), loads the
    /// templates and the static files, and builds the parts. Nothing listens yet.
    public init(configuration: WarmfeedConfiguration, logger: Logger = Logger(label: "warmfeed")) async throws {
        try configuration.validate()
        self.logger = logger
        clock = Uptime()
        let data = URL(fileURLWithPath: configuration.dataFolder, isDirectory: true)
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        do {
            adminToken =
                try configuration.adminToken.map { AdminToken(value: $0, source: "configuration") }
                ?? AdminToken.load(dataFolder: configuration.dataFolder)
        } catch let refused as AdminToken.Refused {
            throw ConfigurationError(refused.description)
        }
        let store = try await StoreLocation(configuration.store, dataFolder: configuration.dataFolder)
            .open(copyFolder: data.appendingPathComponent("postgres-copy").path, logger: logger)
        self.store = store
        if configuration.sources.isEmpty, configuration.demoItems > 0, try await Self.atStart({ try await store.count() }) == 0 {
            let demoItems = configuration.demoItems
            let (_, summary) = try await store.writeOffPool { writer in
                try DemoFeed.forEachItem(count: demoItems) { try writer.upsert($0) }
            }
            logger.info("seeded the demo feed", metadata: ["items": "\(summary.inserted)"])
        }

        let statics = try StaticFiles(folder: configuration.publicFolder)
        let previews = PreviewKeeper(store: store)
        self.previews = previews
        pages = try PageService(
            configuration.pages, templatesFolder: configuration.templatesFolder, statics: statics, store: store,
            previewGeneration: { previews.generation })
        let (renderer, pageCache) = (pages.renderer, pages.cache)
        rows = RowPreparation(store: store, renderer: renderer, pageSize: configuration.pages.size, repairs: pages.repairs, logger: logger)

        let fetcher = OriginFetcher(
            maxConnectionsPerHost: configuration.originConnections, maxConnections: configuration.originConnectionsInAll,
            maxQueueWait: configuration.originQueueWait, logger: logger
        )
        self.fetcher = fetcher
        // A cluster's nodes share one demo origin (`warmfeed origin`); a lone server runs its own.
        let demoBaseURL = configuration.demoOrigin.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        let demo =
            demoBaseURL != nil
            ? nil
            : try DemoOrigin(
                folder: data.appendingPathComponent("demo-origin"),
                poolFolder: configuration.demoPoolFolder.map { URL(fileURLWithPath: $0) },
                // It keeps nothing in memory: its 40 pictures are read from the pool's files,
                // which the system's page cache keeps, and no budget of this process counts.
                latency: configuration.originLatency, keeping: 0, logger: logger
            )
        // Before anything listens: the demo origin answers from its first request.
        if let demo, try await Self.atStart({ try await Self.servesDemoItems(store) }) { try await demo.preparePool() }
        self.demo = demo
        let address = NodeAddress(configured: configuration.advertisedAddress)
        self.address = address
        nodeName = configuration.nodeName
        let peers = KnownPeers(configuration.peers)
        self.peers = peers
        let shared = try configuration.redis.map { url in
            SharedTier(
                client: RedisClient(try RedisLocation(url)), epoch: store.epoch, node: configuration.nodeName, address: address, peers: peers,
                longestFailure: configuration.thumbnails.negativeTTL, logger: logger)
        }
        if shared != nil, peers.isEmpty {
            logger.warning("--redis without --peer: no other node is asked for an original it fetched; this one fetches what it needs itself")
        }
        self.shared = shared
        let metrics = WarmfeedMetrics()
        // The folders whose files items may show: those imported into the store, and the folders `--source` names.
        let folderSources = configuration.sources.compactMap { spec -> String? in
            guard case .folder(let path)? = try? ImportSource(spec) else { return nil }
            return path
        }
        let imageFolders = ImportedFolders(store: store, configured: folderSources)
        thumbnails = try ThumbnailService(
            configuration.thumbnails, dataFolder: data, store: store, shared: shared, fetcher: fetcher,
            origin: ImageSource(
                demoBase: { [demo] in
                    // A cluster's demo origin runs apart; a lone server's is known once it listens.
                    demoBaseURL ?? demo.flatMap { $0.server.port > 0 ? $0.baseURL : nil }
                },
                folders: { [imageFolders] refresh in await imageFolders.folders(refresh: refresh) }),
            limits: try configuration.originalsFetchLimits(), clock: clock, metrics: metrics.factory, previews: previews,
            prewarmMakesMissedAVIF: configuration.prewarm.isOn, nodeName: configuration.nodeName, logger: logger)
        prewarmer = Prewarmer(configuration.prewarm, pages: pages, thumbnails: thumbnails, claims: shared, clock: clock, logger: logger)
        let tracked = configuration.prewarm.isOn ? prewarmer : nil
        // The first visitor finds page 1 warm: it is warmed from the start, as after an import
        // (an empty feed has nothing to warm; its first import will call for it).
        if let tracked, (try? await store.count()) ?? 0 > 0 { tracked.warmTop(revision: store.revision, holdingPageOne: true) }
        // New items from the source warm the top pages.
        let newItems: (@Sendable (Int) -> Void)? = tracked.map { prewarmer in
            { @Sendable revision in prewarmer.warmTop(revision: revision) }
        }
        if configuration.sources.isEmpty {
            poller = nil
            feedFetcher = nil
            sighup = nil
        } else {
            var sources = SourcesConfiguration(specs: configuration.sources, refresh: configuration.refreshInterval)
            if let maxBytes = configuration.sourceMaxBytes { sources.maxBytes = maxBytes }
            sources.listedOnTheWeb = .publicOnly(allowing: try configuration.originAllowances())
            // Feeds get a fetcher of their own: polling a thousand sources never takes the thumbnails' connections.
            let feedFetcher = OriginFetcher(maxConnectionsPerHost: sources.connectionsPerHost, maxConnections: sources.connections, logger: logger)
            self.feedFetcher = feedFetcher
            let poller = SourcePoller(
                sources,
                importer: Importer(
                    store: store, fetcher: feedFetcher, workFolder: data, limits: SourcePoller.pollLimits(maxBytes: sources.maxBytes),
                    writeWindow: sources.writeWindow),
                fetcher: feedFetcher, store: store, newItems: newItems, logger: logger)
            self.poller = poller
            sighup = await SourceListSignal.trapping(for: poller)
        }
        // The server first, then what watches it and the routes it answers with.
        server = HTTPServer(configuration: configuration.http, logger: logger)
        // Each part shows its own numbers; the store first, as the views list it.
        let publishers: [(any StatsPublisher)?] = [StoreService(store: store), poller, thumbnails, prewarmer, pageCache, rows, demo]
        observer = CacheObserver(
            publishers: publishers.compactMap { $0 }, server: server, node: configuration.nodeName, metrics: metrics, clock: clock,
            upkeep: { [pageCache, thumbnails] in
                pageCache.reclaim()
                thumbnails.reclaim()
            }
        )

        var router = Router()
        let feedRoutes = FeedRoutes(pages: pages, prewarmer: tracked, logger: logger)
        feedRoutes.add(to: &router)
        router.problems = { problem, request, headers in feedRoutes.answer(problem, to: request, headers: headers) }
        ThumbnailRoutes(service: thumbnails).add(to: &router)
        AdminRoutes(
            token: adminToken, trustedProxies: try TrustedProxies(configuration.trustedProxies),
            signInRules: SignInThrottle.Rules(firstWait: configuration.signInFirstWait / .seconds(1)), clock: clock, observer: observer,
            dashboard: try DashboardPage(
                templatesFolder: configuration.templatesFolder, styleURL: renderer.styleURL, scriptURL: statics.versionedURL(of: "admin.js")),
            pageHeaders: PageHeaders.security, sources: poller
        ).add(to: &router)
        router.get(prefix: statics.prefix) { request in .now(statics.reply(to: request)) }
        router.get("/healthz") { _ in .now(.plain(200, "ok")) }
        let routes = router
        server.answer { request in routes.reply(to: request) }
    }

    /// A store read the start needs, given 30 s: a store that is slow to
    /// answer its first queries (a node and its PostgreSQL starting together
    /// on a loaded machine) delays the start rather than failing it.
    private static func atStart<T>(_ read: () async throws -> T) async throws -> T {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do {
                return try await read()
            } catch let error as StoreUnavailable where ContinuousClock.now < deadline {
                _ = error
                try await Task.sleep(for: .milliseconds(250))
            }
        }
    }

    /// Whether the store's newest items have demo images (so the demo origin's pool is needed).
    private static func servesDemoItems(_ store: any FeedStore) async throws -> Bool {
        try await store.page(.number(1), size: 30)?.items.contains { $0.imageURL?.hasPrefix("demo:") == true } ?? false
    }

    /// Binds the demo origin and the server, so `port` is known before the
    /// services run (each would bind itself otherwise).
    public func start() throws {
        try demo?.start()
        try server.start()
        address.bound(host: server.host, port: server.port, nodeName: nodeName)
    }

    /// The long-lived parts, in the order a `ServiceGroup` starts them; it
    /// stops them in reverse, each after the one before has ended: the server
    /// first (requests in flight finish), then the poller (an import under
    /// way ends whole), pre-warm, the thumbnails' work, the fetcher, and the demo origin last
    /// (everything before may still be fetching from it).
    public var services: [any Service] {
        var services: [any Service] = []
        if let demo { services.append(demo) }
        services += [StoreService(store: store), rows, previews, observer, OriginFetcherService(fetcher: fetcher)] as [any Service]
        // After the fetcher (so it stops before it): claims are renewed while thumbnails are still being made.
        if let shared { services.append(shared) }
        // The thumbnails' work in flight ends before the fetcher and the shared tier stop, after pre-warm.
        services.append(thumbnails)
        services.append(prewarmer)
        if let feedFetcher { services.append(OriginFetcherService(fetcher: feedFetcher)) }
        if let poller, let sighup { services += [poller, sighup] as [any Service] }
        services.append(server)
        return services
    }

    /// Polls every configured source due once, before the server listens
    /// (the poller's first pass): how each poll ended; none without a source,
    /// or when another server sharing the store polls them.
    @discardableResult
    public func importSources(progress: (@Sendable (ImportProgress) -> Void)? = nil) async -> [Result<ImportReport, ImportError>] {
        await poller?.firstPass(progress: progress) ?? []
    }

    /// Every source, failing first (the operator's `/admin/sources`).
    public var sourceStatuses: [SourceStatus] { poller?.sourceStatuses() ?? [] }

    /// Reads the source lists again now (SIGHUP).
    public func rereadSourceSpecs() {
        poller?.rereadLists()
    }

    /// The bound port.
    public var port: Int { server.port }
}

/// Stops the origin fetcher's transfer loop once the server (which stops
/// before it) no longer asks for thumbnails.
struct OriginFetcherService: Service {
    let fetcher: OriginFetcher

    func run() async throws {
        try? await gracefulShutdown()
        fetcher.shutdown()
    }
}
