import Foundation
import HTTPTestClient
import Reckoning
import Testing
import Thumbnailer
import WarmfeedCore

@testable import DemoOrigin
@testable import Thumbnails
@testable import Warmfeed

/// The demo origin behaves like an image host from its first request: every
/// original a demo item can ask for is painted before it listens, none on a
/// request, and they stay large and varied.
@Suite struct DemoOriginTests {
    @Test func aFreshOriginHasEveryDemoOriginalBeforeItListensAndPaintsNoneOnARequest() async throws {
        let pool = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-pool-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: pool) }
        try await ServedFeed.with(items: 200, pageSize: 10, configure: { $0.demoPoolFolder = pool.path }) { feed in
            let files = try FileManager.default.contentsOfDirectory(atPath: pool.path).filter { !$0.hasPrefix(".") }
            try #require(!files.isEmpty)
            #expect(Set(files) == Set(DemoPool.entries.map(\.fileName)), "the pool, whole, before the first request")
            let demo = try #require(feed.app.demo)
            let source = ImageSource(demoBase: { demo.baseURL })
            var formats: Set<String> = []
            var pictures: Set<UInt64> = []
            for id in Int64(1)...60 {
                let item = try #require(try await feed.app.store.item(id: id))
                let url = try #require(source.url(for: item))
                let target = String(url.dropFirst(demo.baseURL.count))
                let port = demo.server.port
                let response = try await onThread { try TestHTTP.get(port: port, target) }
                #expect(response.status == 200, "\(url)")
                let bytes = [UInt8](response.body)
                let file = pool.appendingPathComponent(".check-\(id)")
                try Data(bytes).write(to: file)
                let facts = try #require(Thumbnailer.facts(ofFile: file.path), "\(url) is not an image")
                #expect(facts.width == item.imageWidth && facts.height == item.imageHeight)
                #expect(facts.width * facts.height >= 1_000_000)
                formats.insert(facts.format)
                pictures.insert(FNV1a.hash64(bytes))
            }
            #expect(formats == ["jpeg", "png", "webp"])
            #expect(pictures.count >= 20, "60 items showed only \(pictures.count) different pictures")
            #expect(demo.paintedOnRequest == 0, "the origin painted on a reader's path")
        }
        // A second server sharing the folder paints nothing.
        try await ServedFeed.with(items: 50, pageSize: 10, configure: { $0.demoPoolFolder = pool.path }) { feed in
            let painted = try await feed.app.demo?.preparePool()
            #expect(painted == 0)
        }
    }
}
