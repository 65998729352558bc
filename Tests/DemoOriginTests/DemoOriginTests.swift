import Foundation
import HTTPTestClient
import Logging
import Reckoning
import Testing
import Thumbnailer
import WarmfeedCore

@testable import DemoOrigin

/// The demo origin behaves like an image host from its first request: every
/// original a demo item can ask for is painted before it listens, none on a
/// request, and they stay large and varied. The origin on its own, as
/// `warmfeed origin` runs it: a real server on a loopback port.
@Suite struct DemoOriginTests {
    /// The address a demo item's picture is fetched at (as the thumbnail service builds it), without the base.
    static func target(of item: FeedItem) throws -> String {
        let image = try #require(item.imageURL)
        try #require(image.hasPrefix("demo:"))
        return "/originals/\(image.dropFirst(5))?w=\(item.imageWidth ?? 1600)&h=\(item.imageHeight ?? 1200)"
    }

    @Test func aFreshOriginHasEveryDemoOriginalBeforeItListensAndPaintsNoneOnARequest() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-origin-\(UUID().uuidString)")
        let pool = folder.appendingPathComponent("pool")
        defer { try? FileManager.default.removeItem(at: folder) }
        let origin = try DemoOrigin(folder: folder, poolFolder: pool, latency: .milliseconds(1), logger: Logger(label: "test"))
        #expect(try await origin.preparePool() == DemoPool.entries.count)
        let files = try FileManager.default.contentsOfDirectory(atPath: pool.path).filter { !$0.hasPrefix(".") }
        #expect(Set(files) == Set(DemoPool.entries.map(\.fileName)), "the pool, whole, before the first request")
        try origin.start()
        var formats: Set<String> = []
        var pictures: Set<UInt64> = []
        for item in DemoFeed.items(count: 60) {
            let target = try Self.target(of: item)
            let port = origin.port
            let response = try await onThread { try TestHTTP.get(port: port, target) }
            #expect(response.status == 200, "\(target)")
            let bytes = [UInt8](response.body)
            let file = folder.appendingPathComponent(".check")
            try Data(bytes).write(to: file)
            let facts = try #require(Thumbnailer.facts(ofFile: file.path), "\(target) is not an image")
            #expect(facts.width == item.imageWidth && facts.height == item.imageHeight)
            #expect(facts.width * facts.height >= 1_000_000)
            formats.insert(facts.format)
            pictures.insert(FNV1a.hash64(bytes))
        }
        #expect(formats == ["jpeg", "png", "webp"])
        #expect(pictures.count >= 20, "60 items showed only \(pictures.count) different pictures")
        #expect(origin.paintedOnRequest == 0, "the origin painted on a reader's path")
        #expect(origin.requestCounts.values.reduce(0, +) == 60, "GET /stats counts each original asked for")
        await origin.shutdown()

        // A second origin sharing the pool paints nothing.
        let second = try DemoOrigin(folder: folder.appendingPathComponent("second"), poolFolder: pool, latency: .zero, logger: Logger(label: "test"))
        #expect(try await second.preparePool() == 0)
    }

    @Test func anOriginalOfNoDemoItemIsPaintedOnceAndBadAsksAreRefused() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-origin-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        // An empty pool: nothing is prepared, so every original is painted on demand.
        let origin = try DemoOrigin(folder: folder, latency: .zero, logger: Logger(label: "test"))
        try origin.start()
        let port = origin.port
        let first = try await onThread { try TestHTTP.get(port: port, "/originals/7.png?w=640&h=480") }
        let again = try await onThread { try TestHTTP.get(port: port, "/originals/7.png?w=640&h=480") }
        #expect(first.status == 200 && again.status == 200 && first.body == again.body)
        #expect(origin.paintedOnRequest == 1, "painted once, then served as a file")
        for target in ["/originals/7.gif?w=640&h=480", "/originals/x.png", "/originals/7.png.png", "/nothing"] {
            let refused = try await onThread { try TestHTTP.get(port: port, target) }
            #expect((400..<500).contains(refused.status), "\(target): \(refused.status)")
        }
        await origin.shutdown()
    }
}
