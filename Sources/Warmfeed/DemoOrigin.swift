import Foundation
import HTTPServer
import Logging
import ServiceLifecycle
import Synchronization
import Thumbnailer
import WarmfeedCore

/// The out-of-the-box origin: a real HTTP server on loopback that serves large
/// originals (JPEG, PNG, WebP of at least a megapixel, painted by libvips from
/// the item's number, so the same item always gets the same image) after a set
/// latency with jitter, like a distant image host. Every demo thumbnail goes
/// through the real fetch path against it.
///
/// Like a real image host it serves files it already has: painted originals are
/// kept in its own folder, and the newest items' originals can be painted ahead
/// in the background at low priority, so the latency readers see is the
/// configured one and not the painting (0.1–0.5 s of CPU per original).
final class DemoOrigin: Service, Sendable {
    /// One original to paint.
    struct Original: Sendable, Hashable {
        var number: UInt64
        var format: OriginalFormat
        var width: Int
        var height: Int

        var fileName: String { "\(number)-\(width)x\(height).\(format.rawValue)" }
    }

    let server: HTTPServer
    private let painter: Thumbnailer
    private let folder: URL
    private let latency: Duration
    /// Originals served lately, kept in memory up to the budget given.
    private let recent: Mutex<LRUCache<Original, ResponseBytes>>
    /// Originals painted ahead in the background once the origin runs.
    private let ahead: [Original]

    /// An origin answering after `latency` (± 20% jitter) from originals kept in
    /// `folder`; it listens once `start()` is called. It paints on its own libvips
    /// worker, apart from the server's thumbnail workers, as a real origin would be
    /// a machine of its own.
    init(folder: URL, latency: Duration, keeping budget: Int = 32 << 20, paintingAhead ahead: [Original] = [], logger: Logger) throws {
        self.ahead = ahead
        recent = Mutex(LRUCache(capacity: budget))
        painter = Thumbnailer(workers: 1)
        self.folder = folder
        self.latency = latency
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.threads = 1
        var router = Router()
        let box = Box()
        router.get(prefix: "/originals/") { request in box.origin?.reply(to: request) ?? .now(.plain(503, "starting")) }
        let routes = router
        server = HTTPServer(configuration: configuration, logger: logger) { routes.reply(to: $0) }
        box.origin = self
    }

    /// Starts listening on a free loopback port (before the feed server starts,
    /// so demo items' URLs can be made).
    func start() throws {
        try server.start()
    }

    /// Runs as a service: paints the originals ahead at low priority, then
    /// waits for shutdown and stops listening.
    func run() async throws {
        if server.port == 0 { try start() }
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask(priority: .low) {
                    for original in self.ahead where !Task.isCancelled {
                        _ = await self.bytes(of: original)
                    }
                }
            }
        }
        try? await gracefulShutdown()
        await shutdown()
    }

    /// Bytes of originals kept in memory now.
    var keptBytes: Int { recent.withLock { $0.totalCost } }

    /// The base URL, once started.
    var baseURL: String { "http://127.0.0.1:\(server.port)" }

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
        let pause = latency * Double.random(in: 0.8...1.2)
        return .later {
            let start = ContinuousClock.now
            guard let body = await self.bytes(of: original) else { return .plain(500, "could not paint the original") }
            // The latency is the origin's distance, whatever finding the file took.
            let remaining = pause - (ContinuousClock.now - start)
            if remaining > .zero { try? await Task.sleep(for: remaining) }
            return Response(status: 200, headers: [HTTPField("Content-Type", original.format.mediaType), HTTPField("Cache-Control", "public, max-age=3600")], body: body)
        }
    }

    /// The original's bytes: from memory, from its file, or painted now and kept.
    private func bytes(of original: Original) async -> ResponseBytes? {
        if let kept = recent.withLock({ $0.value(for: original) }) { return kept }
        let file = folder.appendingPathComponent(original.fileName)
        var bytes = (try? Data(contentsOf: file)).map { [UInt8]($0) }
        if bytes == nil {
            guard let painted = try? await painter.original(width: original.width, height: original.height, seed: original.number, format: original.format) else { return nil }
            let temporary = folder.appendingPathComponent(".tmp-\(UUID().uuidString)")
            if (try? Data(painted).write(to: temporary)) != nil { rename(temporary.path, file.path) }
            bytes = painted
        }
        let body = ResponseBytes(bytes!)
        recent.withLock { _ = $0.insert(body, for: original, cost: body.count) }
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
