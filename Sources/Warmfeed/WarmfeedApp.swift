import Foundation
import HTTPServer
import Logging
import ServiceLifecycle
import WarmfeedCore

/// The whole server: the store, the renderer, the page cache and the routes on
/// one HTTP server. `warmfeed serve` runs it as a service; tests start it on
/// port 0 and talk to it over loopback.
public final class WarmfeedApp: Service, Sendable {
    /// The HTTP server (read `port` after `start()`).
    public let server: HTTPServer
    /// The feed store.
    public let store: FeedStore
    let cache: PageCache

    /// Opens the store (seeding the demo feed into an empty one), loads the
    /// templates and the static files, and builds the routes. Nothing listens yet.
    public init(configuration: WarmfeedConfiguration, logger: Logger = Logger(label: "warmfeed")) async throws {
        try configuration.validate()
        try FileManager.default.createDirectory(atPath: configuration.dataFolder, withIntermediateDirectories: true)
        store = try FeedStore(path: (configuration.dataFolder as NSString).appendingPathComponent("feed.sqlite"))
        if configuration.demoItems > 0, try store.count() == 0 {
            let summary = try store.upsert(DemoFeed.items(count: configuration.demoItems))
            logger.info("seeded the demo feed", metadata: ["items": "\(summary.inserted)"])
        }
        let statics = try StaticFiles(folder: configuration.publicFolder)
        let renderer = try await PageRenderer(
            templatesFolder: configuration.templatesFolder,
            scriptURL: statics.versionedURL(of: "feed.js"),
            styleURL: statics.versionedURL(of: "feed.css"),
            threshold: configuration.threshold
        )
        cache = PageCache(capacityBytes: configuration.pageCacheBytes)
        var router = Router()
        FeedRoutes(store: store, renderer: renderer, cache: cache, pageSize: configuration.pageSize, logger: logger)
            .add(to: &router)
        router.get(prefix: statics.prefix) { request in .now(statics.reply(to: request)) }
        router.get("/healthz") { _ in .now(.plain(200, "ok")) }
        let routes = router
        server = HTTPServer(configuration: configuration.http, logger: logger) { request in routes.reply(to: request) }
    }

    /// Starts listening.
    public func start() throws { try server.start() }

    /// The bound port.
    public var port: Int { server.port }

    /// Stops gracefully.
    public func shutdown() async { await server.shutdown() }

    /// Runs until SIGTERM/SIGINT (through the service group), then stops gracefully.
    public func run() async throws { try await server.run() }
}
