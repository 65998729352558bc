import Foundation
import HTTPTestClient
import Logging
import ServiceLifecycle
import Testing

@testable import DemoOrigin
@testable import Warmfeed
@testable import WarmfeedCore

/// The real Warmfeed app on port 0, with a fresh data folder and the
/// repository's own Templates/ and Public/.
/// One pool of demo originals for all tests: painting is deterministic, so
/// sharing it changes no result, only the CPU spent.
let sharedDemoPool = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-test-demo-pool-v1").path

struct ServedFeed {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    let app: WarmfeedApp
    let dataFolder: String
    /// The app's services, run in one group as `warmfeed serve` runs them.
    let group: ServiceGroup
    let running: Task<Void, Never>
    var port: Int { app.port }

    /// What a test whose feed's images sit on a loopback origin (`FaultyOrigin`)
    /// must say, as an operator would (`--allow-origin 127.0.0.0/8`): a feed's
    /// URLs reach public addresses only, unless allowed.
    static let loopbackOrigins = ["127.0.0.0/8"]

    static func start(
        items: Int, pageSize: Int = 10, threshold: Double = 0.7, dataFolder: String? = nil,
        configure: (inout WarmfeedConfiguration) -> Void = { _ in }
    ) async throws -> ServedFeed {
        var configuration = WarmfeedConfiguration()
        configuration.http.port = 0
        configuration.dataFolder =
            dataFolder
            ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("warmfeed-app-\(UUID().uuidString)").path
        configuration.adminToken = "test-admin-token-of-32-characters"
        configuration.publicFolder = repository.appendingPathComponent("Public").path
        configuration.templatesFolder = repository.appendingPathComponent("Templates").path
        configuration.demoItems = items
        configuration.pages.size = pageSize
        configuration.pages.threshold = threshold
        // The demo origin's pictures are painted once for every test (a test
        // of the painting itself gives a folder of its own).
        configuration.demoPoolFolder = sharedDemoPool
        // CI's two slow cores once took over 15 s for a cluster's cold thumbnail: tests that
        // count images are not cut short by the deadline (its own tests set theirs).
        configuration.thumbnails.answerWithin = .seconds(120)
        configure(&configuration)
        let app = try await WarmfeedApp(configuration: configuration)
        try app.start()
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: app.services, logger: Logger(label: "warmfeed.test")))
        let running = Task { _ = try? await group.run() }
        return ServedFeed(app: app, dataFolder: configuration.dataFolder, group: group, running: running)
    }

    /// Thumbnails ask for WebP (or JPEG), as a browser that takes no AVIF
    /// does; `avif` asks as today's browsers do (AVIF, else WebP at once).
    func thumbnail(_ id: Int64, _ variant: String = "1x", webp: Bool = true, avif: Bool = false) async throws -> TestResponse {
        let accept = avif ? "image/avif,image/webp,*/*" : webp ? "image/webp,*/*" : "image/jpeg,*/*"
        return try await get("/thumbs/\(id)/\(variant)", headers: [("Accept", accept)])
    }

    /// A GET on a new connection. The read timeout only catches a hang: CI's
    /// machines run every suite at once on two slow cores, where a cluster
    /// test's cold thumbnail (a claim, a fetch, a resize, another node asked)
    /// took over 15 s; no test asserts a time with it.
    func get(_ target: String, headers: [(String, String)] = [], timeout: Int = 60, from source: String? = nil) async throws -> TestResponse {
        let port = port
        return try await onThread { try TestHTTP.get(port: port, target, headers: headers, timeout: timeout, from: source) }
    }

    /// The thumbnail addresses (`/thumbs/<picture>/1x`) of the page at `target`, in page order.
    func thumbnailPaths(on target: String = "/") async throws -> [String] {
        let html = try await get(target).text
        var paths: [String] = []
        var rest = Substring(html)
        while let start = rest.range(of: "src=\"/thumbs/") {
            let tail = rest[start.upperBound...]
            guard let end = tail.firstIndex(of: "\"") else { break }
            paths.append("/thumbs/" + tail[..<end])
            rest = tail[end...]
        }
        return paths
    }

    func request(_ method: String, _ target: String, body: String? = nil) async throws -> TestResponse {
        let port = port
        return try await onThread { try TestHTTP.request(port: port, method, target, body: body, timeout: 60) }
    }

    /// The file in `data`'s `folder` (`thumbs`, `originals`) kept for item
    /// `item`'s picture, whatever its tag, whose name ends with `suffix`.
    static func diskFile(in data: String, _ folder: String, item: Int64, suffix: String) -> URL? {
        let url = URL(fileURLWithPath: data).appendingPathComponent(folder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return names.first { $0.hasPrefix("\(item)-") && $0.hasSuffix(suffix) && Picture(name: $0.dropLast(suffix.count)) != nil }
            .map { url.appendingPathComponent($0) }
    }

    /// A POST of a form (`application/x-www-form-urlencoded`) on a new connection.
    func post(
        _ target: String, form: String, headers: [(String, String)] = [], contentType: String = "application/x-www-form-urlencoded"
    ) async throws -> TestResponse {
        let port = port
        return try await onThread {
            try TestHTTP.request(port: port, "POST", target, headers: [("Content-Type", contentType)] + headers, body: form, timeout: 60)
        }
    }

    func stop(keepingData: Bool = false) async {
        await group.triggerGracefulShutdown()
        await running.value
        if !keepingData { try? FileManager.default.removeItem(atPath: dataFolder) }
    }

    /// Starts a feed, runs `body` against it, and always stops it and removes its data.
    static func with<T>(
        items: Int, pageSize: Int = 10, threshold: Double = 0.7,
        configure: (inout WarmfeedConfiguration) -> Void = { _ in }, _ body: (ServedFeed) async throws -> T
    ) async throws -> T {
        let feed = try await start(items: items, pageSize: pageSize, threshold: threshold, configure: configure)
        do {
            let result = try await body(feed)
            await feed.stop()
            return result
        } catch {
            await feed.stop()
            throw error
        }
    }
}

/// What the tests read out of a rendered page: rows and the sentinel, in order.
struct RenderedPage {
    enum Part: Equatable {
        case row(id: String, position: Int)
        case sentinel(fragment: String, next: String)
        case end
    }

    let html: String
    let parts: [Part]

    init(_ html: String) {
        self.html = html
        var parts: [Part] = []
        let pattern = try! NSRegularExpression(
            pattern:
                #"<article class="row" id="i(\d+)" aria-posinset="(\d+)"|<div class="sentinel" data-fragment="([^"]+)" aria-hidden="true"></div>|<p class="end">"#
        )
        let ns = html as NSString
        // A document's link to the next page stands after the feed (the sentinel is an inert
        // marker); a fragment has none, and its next page's document is its fragment's twin.
        let more = try! NSRegularExpression(pattern: #"<p class="more"><a href="([^"]+)" rel="next">"#)
        let moreLink = more.firstMatch(in: html, range: NSRange(location: 0, length: ns.length)).map {
            ns.substring(with: $0.range(at: 1)).replacingOccurrences(of: "&amp;", with: "&")
        }
        for match in pattern.matches(in: html, range: NSRange(location: 0, length: ns.length)) {
            func group(_ i: Int) -> String? {
                let range = match.range(at: i)
                return range.location == NSNotFound ? nil : ns.substring(with: range).replacingOccurrences(of: "&amp;", with: "&")
            }
            if let id = group(1), let position = group(2) {
                parts.append(.row(id: id, position: Int(position)!))
            } else if let fragment = group(3) {
                parts.append(.sentinel(fragment: fragment, next: moreLink ?? fragment.replacingOccurrences(of: "/fragment?", with: "/?")))
            } else {
                parts.append(.end)
            }
        }
        self.parts = parts
    }

    var rows: [(id: String, position: Int)] {
        parts.compactMap { if case .row(let id, let position) = $0 { (id, position) } else { nil } }
    }

    var sentinel: (fragment: String, next: String)? {
        for part in parts { if case .sentinel(let fragment, let next) = part { return (fragment, next) } }
        return nil
    }

    /// How many rows come before the sentinel.
    var rowsBeforeSentinel: Int? {
        parts.firstIndex { if case .sentinel = $0 { true } else { false } }
    }
}
