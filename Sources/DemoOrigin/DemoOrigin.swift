import Foundation
import HTTPServer
import Logging
import ServiceLifecycle
import Synchronization
import Thumbnailer
import WarmfeedCore

/// The out-of-the-box origin: a real HTTP server on loopback that serves large
/// originals (JPEG, PNG, WebP of at least a megapixel) after a set latency
/// with jitter, like a distant image host. Every demo thumbnail goes through
/// the real fetch path against it.
///
/// Like a real image host it serves files it already has: every original a
/// demo item can ask for is in its ``DemoPool``, painted once before it
/// listens, so it answers within its latency from its first request. Other
/// sizes (tests ask for some) are painted on demand and kept.
///
/// `warmfeed origin` runs it as a service of its own, so a cluster's nodes
/// share one origin, as in real life; it counts the originals asked of it
/// (`GET /stats`), which shows any work a cluster does twice.
public final class DemoOrigin: Service, StatsPublisher, Sendable {
    /// One original to paint on demand, for a size no demo item has.
    struct Original: Sendable, Hashable {
        var number: UInt64
        var format: OriginalFormat
        var width: Int
        var height: Int

        var fileName: String { "\(number)-\(width)x\(height).\(format.rawValue)" }

        /// Its picture in the pool, when it is a demo item's.
        var pooled: DemoPool.Entry? { DemoPool.entry(number: number, format: format, width: width, height: height) }
    }

    public let server: HTTPServer
    private let painter: Thumbnailer
    private let folder: URL
    private let pool: DemoPool
    private let latency: Duration
    private let logger: Logger
    /// Originals served lately, by file name, kept in memory up to the budget given.
    private let recent: Mutex<LRUCache<String, ResponseBytes>>
    private let painted = Atomic<Int>(0)
    /// Requests for each original (by name and size), since start.
    private let asked = Mutex<[String: Int]>([:])

    /// An origin answering after `latency` (± 20% jitter) from originals kept in
    /// `folder` (its pool in `poolFolder`, by default a folder inside); it
    /// listens once `start()` is called. It paints on libvips workers of its
    /// own, apart from the server's thumbnail workers, as a real origin would
    /// be a machine of its own.
    public init(
        folder: URL, poolFolder: URL? = nil, latency: Duration, keeping budget: Int = 32 << 20,
        host: String = "127.0.0.1", port: Int = 0, threads: Int = 1, logger: Logger
    ) throws {
        recent = Mutex(LRUCache(capacity: budget))
        painter = Thumbnailer()
        self.folder = folder
        pool = DemoPool(folder: poolFolder ?? folder.appendingPathComponent("pool"))
        self.latency = latency
        self.logger = logger
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var configuration = HTTPServerConfiguration()
        configuration.host = host
        configuration.port = port
        configuration.threads = threads
        var router = Router()
        let box = Box()
        router.get(prefix: "/originals/") { request in box.origin?.reply(to: request) ?? .now(.plain(503, "starting")) }
        router.get("/stats") { _ in .now(box.origin?.statsResponse() ?? .plain(503, "starting")) }
        router.get("/health") { _ in .now(.plain(200, "ok")) }
        let routes = router
        server = HTTPServer(configuration: configuration, logger: logger) { routes.reply(to: $0) }
        box.origin = self
    }

    /// Paints the pool's missing pictures (all of them in a fresh folder:
    /// about 3 s of CPU); returns how many were painted.
    @discardableResult
    public func preparePool() async throws -> Int {
        try await pool.prepare(painter: painter, logger: logger)
    }

    /// Starts listening on a free loopback port (before the feed server starts,
    /// so demo items' URLs can be made).
    public func start() throws {
        try server.start()
    }

    /// The port it listens on, once started.
    public var port: Int { server.port }

    /// Runs as a service: waits for shutdown and stops listening.
    public func run() async throws {
        if server.port == 0 { try start() }
        try? await gracefulShutdown()
        await shutdown()
    }

    /// Originals painted because a request asked for one it did not have.
    var paintedOnRequest: Int { painted.load(ordering: .relaxed) }

    /// Requests for each original since start, by name and size.
    var requestCounts: [String: Int] { asked.withLock { $0 } }

    /// `GET /stats`: originals asked for, in all and each (JSON).
    private func statsResponse() -> Response {
        let counts = asked.withLock { $0 }
        let body: [String: Any] = ["requests": counts.values.reduce(0, +), "distinct": counts.count, "originals": counts]
        let json = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data("{}".utf8)
        return Response(
            status: 200, headers: [HTTPField("Content-Type", "application/json"), HTTPField("Cache-Control", "no-store")], body: ResponseBytes([UInt8](json)))
    }

    /// Bytes of originals kept in memory now.
    public var keptBytes: Int { recent.withLock { $0.totalCost } }

    /// The demo origin's line of the memory the process holds.
    public func publish(into stats: inout CacheStats) {
        stats.memoryUse.demoOriginBytes = keptBytes
    }

    /// The base URL, once started.
    public var baseURL: String { "http://127.0.0.1:\(server.port)" }

    /// The original a demo item's image URL (`demo:<n>.<ext>`) and size name.
    static func original(imageURL: String, width: Int?, height: Int?) -> Original? {
        guard imageURL.hasPrefix("demo:") else { return nil }
        let parts = imageURL.dropFirst(5).split(separator: ".")
        guard parts.count == 2, let number = UInt64(parts[0]),
            let format = OriginalFormat(rawValue: parts[1] == "jpg" ? "jpeg" : String(parts[1]))
        else { return nil }
        return Original(number: number, format: format, width: width ?? 1600, height: height ?? 1200)
    }

    private func reply(to request: Request) -> Reply {
        let name = String(request.path.dropFirst("/originals/".count))
        let width = request.queryValues("w").first.flatMap(Int.init).map { min(4096, max(64, $0)) }
        let height = request.queryValues("h").first.flatMap(Int.init).map { min(4096, max(64, $0)) }
        guard let original = Self.original(imageURL: "demo:" + name, width: width, height: height) else {
            return .now(.plain(404, "no such original"))
        }
        asked.withLock { $0[original.fileName, default: 0] += 1 }
        let pause = latency * Double.random(in: 0.8...1.2)
        return .later {
            let start = ContinuousClock.now
            guard let body = await self.bytes(of: original) else { return .plain(500, "could not paint the original") }
            // The latency is the origin's distance, whatever finding the file took.
            let remaining = pause - (ContinuousClock.now - start)
            if remaining > .zero { try? await Task.sleep(for: remaining) }
            return Response(
                status: 200, headers: [HTTPField("Content-Type", original.format.mediaType), HTTPField("Cache-Control", "public, max-age=3600")], body: body)
        }
    }

    /// The original's bytes: from memory, from its file, or, for a size no
    /// demo item has, painted now and kept.
    private func bytes(of original: Original) async -> ResponseBytes? {
        let pooled = original.pooled
        let name = pooled?.fileName ?? original.fileName
        if let kept = recent.withLock({ $0.value(for: name) }) { return kept }
        let file = pooled.map(pool.file) ?? folder.appendingPathComponent(original.fileName)
        var bytes = (try? Data(contentsOf: file)).map { [UInt8]($0) }
        if bytes == nil {
            if pooled != nil { logger.warning("a picture of the demo pool is missing: painting it", metadata: ["file": "\(file.path)"]) }
            let seed = pooled?.seed ?? original.number
            guard let painted = try? await painter.original(width: original.width, height: original.height, seed: seed, format: original.format) else {
                return nil
            }
            self.painted.add(1, ordering: .relaxed)
            let temporary = file.deletingLastPathComponent().appendingPathComponent(".tmp-\(UUID().uuidString)")
            if (try? Data(painted).write(to: temporary)) != nil { rename(temporary.path, file.path) }
            bytes = painted
        }
        let body = ResponseBytes(bytes!)
        recent.withLock { _ = $0.insert(body, for: name, cost: body.count) }
        return body
    }

    func shutdown() async {
        await server.shutdown()
    }

    /// Breaks the cycle between the router (built before `self` exists) and `self`.
    private final class Box: @unchecked Sendable {
        // Written once in init before the server starts, read-only after; weak,
        // because the origin owns the server that owns this box.
        weak var origin: DemoOrigin?
    }
}
