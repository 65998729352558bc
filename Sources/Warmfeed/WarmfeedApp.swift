import FeedImport
import Foundation
import HTTPServer
import Logging
import OriginFetcher
import ServiceLifecycle
import Synchronization
import Thumbnailer
import WarmfeedCore

/// The whole server: store, renderer, page cache, thumbnail cache, pre-warmer,
/// demo origin and admin views on one HTTP server. `warmfeed serve` runs it as
/// a service; tests start it on port 0 and talk to it over loopback.
public final class WarmfeedApp: Service, Sendable {
    /// The HTTP server (read `port` after `start()`).
    public let server: HTTPServer
    /// The feed store.
    public let store: FeedStore
    /// The admin token.
    public let adminToken: AdminToken
    let cache: PageCache
    let thumbnails: ThumbnailService
    let prewarmer: Prewarmer
    let observer: CacheObserver
    let fetcher: OriginFetcher
    let demo: DemoOrigin?
    /// Imports the configured source, when there is one.
    let importer: Importer
    let source: ImportSource?
    let refreshInterval: Duration?
    private let paintAhead: Int
    private let prewarmPages: Int
    let logger: Logger
    private let background = Mutex<Task<Void, Never>?>(nil)

    /// Opens the store (seeding the demo feed into an empty one), loads the
    /// templates and the static files, and builds the routes. Nothing listens yet.
    public init(configuration: WarmfeedConfiguration, logger: Logger = Logger(label: "warmfeed")) async throws {
        try configuration.validate()
        self.logger = logger
        let data = URL(fileURLWithPath: configuration.dataFolder, isDirectory: true)
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        store = try FeedStore(path: data.appendingPathComponent("feed.sqlite").path)
        if configuration.source == nil, configuration.demoItems > 0, try store.count() == 0 {
            let summary = try store.upsert(DemoFeed.items(count: configuration.demoItems))
            logger.info("seeded the demo feed", metadata: ["items": "\(summary.inserted)"])
        }
        adminToken = try configuration.adminToken.map { AdminToken(value: $0, source: "configuration") }
            ?? AdminToken.load(dataFolder: configuration.dataFolder)

        let statics = try StaticFiles(folder: configuration.publicFolder)
        let renderer = try await PageRenderer.load(configuration, statics: statics)
        cache = PageCache(capacityBytes: configuration.pageCacheBytes)

        let thumbnailer = Thumbnailer()
        fetcher = OriginFetcher(maxConnectionsPerHost: 8, logger: logger)
        demo = try DemoOrigin(folder: data.appendingPathComponent("demo-origin"), latency: configuration.originLatency, logger: logger)
        paintAhead = configuration.demoPaintAhead
        prewarmPages = configuration.prewarmPages
        importer = Importer(store: store, fetcher: fetcher, workFolder: data)
        source = try configuration.source.map { text throws(ImportError) in try ImportSource(text) }
        refreshInterval = configuration.refreshInterval
        var limits = FetchLimits()
        limits.totalTimeout = configuration.originTimeout
        // Cut an origin that drips: under 512 bytes a second for 5 seconds (including
        // the wait for the first byte, so a slow-to-answer origin gets 5 seconds).
        limits.lowSpeedLimit = 512
        limits.lowSpeedTime = .seconds(5)
        thumbnails = ThumbnailService(
            memoryBudget: configuration.thumbnailCacheBytes,
            negativeTTL: ThumbnailService.seconds(configuration.negativeTTL),
            disk: try ThumbnailDiskTier(folder: data.appendingPathComponent("thumbs"), budget: configuration.diskCacheBytes),
            fetcher: fetcher,
            thumbnailer: thumbnailer,
            origin: ImageSource(demo: demo),
            limits: limits
        )
        // Pre-warm reads and renders pages as the routes do, through the same page
        // cache; these routes serve no reader, so they track none.
        let renderingRoutes = FeedRoutes(
            store: store, renderer: renderer, cache: cache, pageSize: configuration.pageSize, prewarmer: nil, logger: logger
        )
        let store = store
        let pages = FragmentPages { query in
            guard let (page, rendering) = try? renderingRoutes.fragment(for: query, revision: store.revision) else { return nil }
            return (page, rendering.number)
        }
        // The one clock of the app; pre-warm is its first user.
        let clock = Uptime()
        prewarmer = Prewarmer(lead: configuration.prewarmPages, pages: pages, thumbnails: thumbnails, clock: clock, logger: logger)
        observer = CacheObserver(thumbnails: thumbnails, prewarmer: prewarmer, pages: cache, fetcher: fetcher, metrics: WarmfeedMetrics())

        if let source = source.map({ "\($0)" }) {
            let refresh = configuration.refreshInterval.map(ThumbnailService.seconds)
            observer.source.withLock { $0 = CacheStats.Source(source: source, refreshSeconds: refresh) }
        }
        var router = Router()
        let feed = FeedRoutes(
            store: store, renderer: renderer, cache: cache, pageSize: configuration.pageSize,
            prewarmer: configuration.prewarmPages > 0 ? prewarmer : nil, logger: logger
        )
        feed.add(to: &router)
        ThumbnailRoutes(store: store, service: thumbnails).add(to: &router)
        AdminRoutes(token: adminToken, observer: observer, renderer: renderer).add(to: &router)
        router.get(prefix: statics.prefix) { request in .now(statics.reply(to: request)) }
        router.get("/healthz") { _ in .now(.plain(200, "ok")) }
        let routes = router
        server = HTTPServer(configuration: configuration.http, logger: logger) { request in routes.reply(to: request) }
    }

    /// Starts the demo origin, the pre-warmer and the server.
    public func start() throws {
        var ahead: [DemoOrigin.Original] = []
        if paintAhead > 0, let page = try? store.page(.number(1), size: paintAhead) {
            ahead = page.items.compactMap { item in
                item.imageURL.flatMap { DemoOrigin.original(imageURL: $0, width: item.imageWidth, height: item.imageHeight) }
            }
        }
        try demo?.start(paintingAhead: ahead)
        try server.start()
        let prewarmer = prewarmer, observer = observer, store = store
        store.noticeOtherWriters()
        background.withLock {
            $0 = Task {
                await withDiscardingTaskGroup { group in
                    group.addTask { try? await prewarmer.run() }
                    group.addTask { try? await observer.run() }
                    group.addTask {
                        // Another process may import into this store: notice it within a second.
                        while (try? await Task.sleep(for: .seconds(1))) != nil { store.noticeOtherWriters() }
                    }
                    if let interval = self.refreshInterval, self.source != nil {
                        group.addTask {
                            while (try? await Task.sleep(for: interval)) != nil {
                                await self.importSource()
                            }
                        }
                    }
                }
            }
        }
    }

    /// Imports the configured source (with the validators of the last
    /// import, so an unchanged URL answers 304), logs what it did, and warms
    /// the top pages when new items arrived. A failure is logged; the store
    /// keeps what it had and the server keeps serving it.
    @discardableResult
    public func importSource(progress: (@Sendable (ImportProgress) -> Void)? = nil) async -> Result<ImportReport, ImportError>? {
        guard let source else { return nil }
        do throws(ImportError) {
            // The validators of the last import live in the store, so a restart asks
            // with them too and an unchanged feed costs a 304.
            let key = "validators \(source)"
            let validators = store.note(key).flatMap(Self.decode) ?? ConditionalRequest()
            let report = try await importer.run(source, validators: validators, progress: progress)
            try? store.setNote(key, Self.encode(report.validators))
            observer.source.withLock { $0?.record(report) }
            if report.notModified {
                logger.info("source not modified", metadata: ["source": "\(source)"])
            } else {
                logger.info("imported the source", metadata: [
                    "source": "\(source)", "new": "\(report.written.inserted)", "updated": "\(report.written.updated)",
                    "skipped": "\(report.skippedCount)",
                ])
            }
            if report.written.inserted > 0, prewarmPages > 0 {
                prewarmer.warmTop(revision: store.revision)
            }
            return .success(report)
        } catch {
            observer.source.withLock { $0?.record(error) }
            logger.error("import failed; serving what the store had", metadata: ["source": "\(source)", "reason": "\(error)"])
            return .failure(error)
        }
    }

    /// Validators as one line for the store's notes: "etag\nlast-modified".
    static func encode(_ validators: ConditionalRequest) -> String {
        "\(validators.etag ?? "")\n\(validators.lastModified ?? "")"
    }

    static func decode(_ text: String) -> ConditionalRequest? {
        let parts = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 else { return nil }
        return ConditionalRequest(etag: parts[0].isEmpty ? nil : parts[0], lastModified: parts[1].isEmpty ? nil : parts[1])
    }

    /// The bound port.
    public var port: Int { server.port }

    /// Stops everything gracefully: no new connections, running requests finish.
    public func shutdown() async {
        await server.shutdown()
        background.withLock { $0 }?.cancel()
        fetcher.shutdown()
        await demo?.shutdown()
    }

    /// Runs until SIGTERM/SIGINT (through the service group), then stops gracefully.
    public func run() async throws {
        if server.port == 0 { try start() }
        try? await gracefulShutdown()
        await shutdown()
    }
}
