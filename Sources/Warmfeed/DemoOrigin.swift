import HTTPServer
import Logging
import Synchronization
import Thumbnailer
import WarmfeedCore

/// The out-of-the-box origin: a real HTTP server on loopback that serves large
/// originals (JPEG, PNG, WebP of at least a megapixel, painted by libvips from
/// the item's number, so the same item always gets the same image) after a set
/// latency with jitter, like a distant image host. Every demo thumbnail goes
/// through the real fetch path against it.
final class DemoOrigin: Sendable {
    let server: HTTPServer
    private let thumbnailer: Thumbnailer
    private let latency: Duration
    private let originals = Mutex(LRUCache<String, ResponseBytes>(capacity: 96 << 20))
    private let served = Mutex(0)

    /// An origin answering after `latency` (± 20% jitter); it listens once `start()` is called.
    /// It paints on its own libvips worker, apart from the server's thumbnail workers,
    /// as a real origin would be a machine of its own.
    init(latency: Duration, logger: Logger) {
        thumbnailer = Thumbnailer(workers: 1)
        self.latency = latency
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

    /// Starts listening on a free loopback port.
    func start() throws { try server.start() }

    /// The base URL, once started.
    var baseURL: String { "http://127.0.0.1:\(server.port)" }

    /// Originals served so far.
    var servedCount: Int { served.withLock { $0 } }

    private func reply(to request: Request) -> Reply {
        let name = String(request.path.dropFirst("/originals/".count))
        let parts = name.split(separator: ".")
        guard parts.count == 2, let number = UInt64(parts[0]), let format = OriginalFormat(rawValue: parts[1] == "jpg" ? "jpeg" : String(parts[1])) else {
            return .now(.plain(404, "no such original"))
        }
        let width = request.queryValues("w").first.flatMap(Int.init).map { min(4096, max(64, $0)) } ?? 1600
        let height = request.queryValues("h").first.flatMap(Int.init).map { min(4096, max(64, $0)) } ?? 1200
        let key = "\(number).\(format.rawValue).\(width)x\(height)"
        let pause = latency * Double.random(in: 0.8...1.2)
        return .later {
            let start = ContinuousClock.now
            var body = self.originals.withLock { $0.value(for: key) }
            if body == nil, let bytes = try? await self.thumbnailer.original(width: width, height: height, seed: number, format: format) {
                let made = ResponseBytes(bytes)
                self.originals.withLock { _ = $0.insert(made, for: key, cost: made.count) }
                body = made
            }
            guard let body else { return .plain(500, "could not paint the original") }
            // The latency is the origin's distance, whatever the painting took.
            let remaining = pause - (ContinuousClock.now - start)
            if remaining > .zero { try? await Task.sleep(for: remaining) }
            self.served.withLock { $0 += 1 }
            return Response(status: 200, headers: [HTTPField("Content-Type", format.mediaType), HTTPField("Cache-Control", "public, max-age=3600")], body: body)
        }
    }

    func shutdown() async { await server.shutdown() }

    /// Breaks the cycle between the router (built before `self` exists) and `self`.
    private final class Box: @unchecked Sendable {
        // Written once in init before the server starts, read-only after; weak,
        // because the origin owns the server that owns this box.
        weak var origin: DemoOrigin?
    }
}
