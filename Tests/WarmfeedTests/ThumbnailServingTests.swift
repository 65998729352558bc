import Foundation
import HTTPTestClient
import Testing
import Thumbnailer

@testable import Warmfeed
@testable import WarmfeedCore

/// Runs `body` with a scripted loopback origin, always stopping it (off the cooperative pool).
func withOrigin<T>(_ body: (FaultyOrigin) async throws -> T) async throws -> T {
    let origin = try FaultyOrigin()
    do {
        let result = try await body(origin)
        try await onThread { origin.stop() }
        return result
    } catch {
        try? await onThread { origin.stop() }
        throw error
    }
}

func isPlaceholder(_ response: TestResponse) -> Bool {
    response.status == 200 && response.header("X-Warmfeed-Placeholder") == "1" && response.header("Content-Type") == "image/svg+xml"
}

@Suite struct ThumbnailServingTests {
    @Test func makesWebPAndJPEGThumbnailsThroughTheRealFetchPathOnce() async throws {
        let jpeg = try await OriginImages.jpeg()
        try await withOrigin { origin in
            origin.script("/a.jpg", .respond(contentType: "image/jpeg", body: jpeg))
            try await ServedFeed.with(items: 0, configure: { $0.allowedOrigins = ServedFeed.loopbackOrigins }) { feed in
                let id = try await feed.addItems(imagesAt: ["/a.jpg"], on: origin)[0]
                let webp = try await feed.thumbnail(id)
                #expect(webp.status == 200)
                #expect(webp.header("Content-Type") == "image/webp")
                #expect(Array(webp.body.prefix(4)) == Array("RIFF".utf8))
                let info = try OriginImages.painter.info(of: webp.body)
                #expect(info.width == 160 && info.height == 120)
                let double = try await feed.thumbnail(id, "2x")
                let doubleInfo = try OriginImages.painter.info(of: double.body)
                #expect(doubleInfo.width == 320 && doubleInfo.height == 240)
                let jpegThumb = try await feed.thumbnail(id, webp: false)
                #expect(jpegThumb.header("Content-Type") == "image/jpeg")
                #expect(Array(jpegThumb.body.prefix(2)) == [0xff, 0xd8])
                // Served again from memory: the origin is not asked again.
                let again = try await feed.thumbnail(id)
                #expect(again.body == webp.body)
                #expect(origin.requests(to: "/a.jpg") == 1, "1x WebP, 2x WebP and 1x JPEG come from one fetch of the original")
            }
        }
    }

    /// Pre-warm's work is started as tasks kept in the service's tables, under
    /// the state machine's lock; a reader who joins it while the original is
    /// still on its way raises that task and gets the thumbnail from the same
    /// one fetch.
    @Test func aReaderWhoJoinsPrewarmsWorkGetsTheThumbnailFromItsOneFetch() async throws {
        let jpeg = try await OriginImages.jpeg(seed: 3)
        try await withOrigin { origin in
            origin.script("/joined.jpg", .delay(.milliseconds(800), then: .respond(contentType: "image/jpeg", body: jpeg)))
            try await ServedFeed.with(
                items: 0,
                configure: {
                    $0.prewarm.pages = 0; $0.allowedOrigins = ServedFeed.loopbackOrigins
                }
            ) { feed in
                let id = try await feed.addItems(imagesAt: ["/joined.jpg"], on: origin)[0]
                let item = try #require(try await feed.app.store.item(id: id))
                let key = try #require(feed.app.thumbnails.key(of: item, ThumbnailVariant(scale: 1, format: .webp)))
                let warming = Task { await feed.app.thumbnails.warm(key, of: item) }
                // Not a time asserted: only so that pre-warm's fetch is under way when the reader asks.
                try await Task.sleep(for: .milliseconds(200))
                let response = try await feed.thumbnail(id)
                #expect(response.status == 200 && !isPlaceholder(response))
                #expect(response.header("Content-Type") == "image/webp")
                await warming.value
                #expect(origin.requests(to: "/joined.jpg") == 1)
            }
        }
    }

    @Test func concurrentRequestsShareOneFetch() async throws {
        let jpeg = try await OriginImages.jpeg(seed: 2)
        try await withOrigin { origin in
            origin.script("/slow.jpg", .delay(.milliseconds(400), then: .respond(contentType: "image/jpeg", body: jpeg)))
            try await ServedFeed.with(items: 0, configure: { $0.allowedOrigins = ServedFeed.loopbackOrigins }) { feed in
                let id = try await feed.addItems(imagesAt: ["/slow.jpg"], on: origin)[0]
                let bodies = try await withThrowingTaskGroup(of: [UInt8].self) { group in
                    for _ in 0..<12 { group.addTask { try await feed.thumbnail(id).body } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(Set(bodies).count == 1)
                #expect(bodies[0].count > 100)
                #expect(origin.requests(to: "/slow.jpg") == 1)
                let stats = try await feed.adminJSON()
                #expect((stats["coalesced"] as? Int ?? 0) + (stats["hits"] as? Int ?? 0) == 11)
            }
        }
    }

    @Test func everyOriginFaultGetsAPlaceholderThatIsRemembered() async throws {
        let jpeg = try await OriginImages.jpeg(seed: 3)
        try await withOrigin { origin in
            let faults: [(String, FaultyOrigin.Behavior)] = [
                ("/timeout.jpg", .delay(.seconds(30), then: .respond(contentType: "image/jpeg", body: jpeg))),
                ("/404.jpg", .respond(status: 404, contentType: "text/plain", body: Array("gone".utf8))),
                ("/500.jpg", .respond(status: 500, contentType: "text/plain", body: Array("boom".utf8))),
                ("/reset.jpg", .reset),
                ("/drip.jpg", .drip(length: 100_000, interval: .seconds(1), contentType: "image/jpeg")),
                ("/html.jpg", .respond(contentType: "text/html", body: Array("<html><body>not an image</body></html>".utf8))),
                ("/truncated.jpg", .respond(contentType: "image/jpeg", body: Array(jpeg.prefix(jpeg.count * 6 / 10)))),
                ("/bomb.png", .respond(contentType: "image/png", body: OriginImages.bombPNG())),
                ("/loop.jpg", .redirect(to: "/loop.jpg")),
                ("/garbage.jpg", .garbage(Array("SSH-2.0-not-http\r\n".utf8))),
            ]
            for (path, behavior) in faults { origin.script(path, behavior) }
            // Failures are remembered 5 s at first, longer when they repeat; this test's own
            // faults take longer than that, so it asks for a minute from the first.
            let remembered: (inout WarmfeedConfiguration) -> Void = {
                $0.originTimeout = .seconds(2)
                $0.allowedOrigins = ServedFeed.loopbackOrigins
                $0.thumbnails.negativeTTL = .seconds(60)
                $0.thumbnails.firstNegativeTTL = .seconds(60)
            }
            try await ServedFeed.with(items: 0, configure: remembered) { feed in
                let ids = try await feed.addItems(imagesAt: faults.map(\.0), on: origin)
                let responses = try await withThrowingTaskGroup(of: (Int, TestResponse).self) { group in
                    for (index, id) in ids.enumerated() { group.addTask { (index, try await feed.thumbnail(id)) } }
                    return try await group.reduce(into: [Int: TestResponse]()) { $0[$1.0] = $1.1 }
                }
                for (index, (path, _)) in faults.enumerated() {
                    #expect(isPlaceholder(responses[index]!), "\(path): \(responses[index]!.status) \(responses[index]!.header("Content-Type") ?? "")")
                }
                let asked = faults.map { origin.requests(to: $0.0) }
                // Asked again at once: the failures are negative-cached, the origin is left alone.
                for id in ids { #expect(isPlaceholder(try await feed.thumbnail(id))) }
                #expect(faults.map { origin.requests(to: $0.0) } == asked)
                let stats = try await feed.adminJSON()
                #expect(stats["negative_entries"] as? Int == faults.count)
                #expect(stats["negative_hits"] as? Int == faults.count)
                #expect(try await feed.get("/").status == 200, "the server is still up")
            }
        }
    }

    @Test func badThumbnailAddressesGetClear4xx() async throws {
        try await withOrigin { origin in
            try await ServedFeed.with(items: 0, configure: { $0.allowedOrigins = ServedFeed.loopbackOrigins }) { feed in
                let id = try await feed.addItems(imagesAt: ["/x.jpg"], on: origin)[0]
                #expect(try await feed.get("/thumbs/999999/1x").status == 404)
                #expect(try await feed.get("/thumbs/\(id)/3x").status == 400)
                #expect(try await feed.get("/thumbs/\(id)/original").status == 400)
                for bad in ["/thumbs/abc/1x", "/thumbs/-1/1x", "/thumbs/0/1x", "/thumbs/\(id)", "/thumbs/\(id)/1x/extra", "/thumbs/99999999999999999999/1x"] {
                    #expect(try await feed.get(bad).status == 404, "\(bad)")
                }
                // There is no way to name a URL: extra parameters are ignored, nothing is fetched from them.
                _ = try await feed.get("/thumbs/\(id)/1x?url=http://127.0.0.1:\(origin.port)/evil")
                #expect(origin.requests(to: "/evil") == 0)
                #expect(try await feed.request("POST", "/thumbs/\(id)/1x", body: "x").status == 405)
            }
        }
    }

    @Test func theDiskTierSurvivesARestartAndACorruptFileIsNeverServed() async throws {
        let jpeg = try await OriginImages.jpeg(seed: 4)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-restart-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var id: Int64 = 0
        var first: [UInt8] = []
        // No originals kept on disk: the thumbnails' disk tier is all there is once the origin is gone.
        let thumbnailsOnly: (inout WarmfeedConfiguration) -> Void = {
            $0.thumbnails.originalsDiskBytes = 0
            $0.allowedOrigins = ServedFeed.loopbackOrigins
        }
        try await withOrigin { origin in
            origin.script("/keep.jpg", .respond(contentType: "image/jpeg", body: jpeg))
            let feed = try await ServedFeed.start(items: 0, dataFolder: folder, configure: thumbnailsOnly)
            id = try await feed.addItems(imagesAt: ["/keep.jpg"], on: origin)[0]
            first = try await feed.thumbnail(id).body
            #expect(first.count > 100)
            await feed.stop(keepingData: true)
        }
        // The origin is gone now: only the disk tier can answer.
        let restarted = try await ServedFeed.start(items: 0, dataFolder: folder, configure: thumbnailsOnly)
        #expect(try await restarted.thumbnail(id).body == first)
        let stats = try await restarted.adminJSON()
        #expect(stats["disk_hits"] as? Int == 1)
        await restarted.stop(keepingData: true)

        // Corrupt the file: the next start must not serve it.
        let oneX = try #require(ServedFeed.diskFile(in: folder, "thumbs", item: id, suffix: "-1x.webp"))
        var bytes = try Data(contentsOf: oneX)
        bytes[bytes.count / 2] ^= 0x5a
        try bytes.write(to: oneX)
        let third = try await ServedFeed.start(items: 0, dataFolder: folder, configure: thumbnailsOnly)
        let answer = try await third.thumbnail(id)
        #expect(isPlaceholder(answer), "a corrupt file must be detected, not served")
        #expect(!FileManager.default.fileExists(atPath: oneX.path))
        await third.stop(keepingData: true)
    }

    /// Originals kept on disk: after a restart, with the origin gone, an item's
    /// other size is made from its kept original; a corrupt original is a miss.
    @Test func aKeptOriginalMakesTheOtherSizeAfterARestartAndACorruptOneIsNeverUsed() async throws {
        let jpeg = try await OriginImages.jpeg(seed: 6)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-originals-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var ids: [Int64] = []
        try await withOrigin { origin in
            origin.script("/a.jpg", .respond(contentType: "image/jpeg", body: jpeg))
            origin.script("/b.jpg", .respond(contentType: "image/jpeg", body: jpeg))
            let feed = try await ServedFeed.start(items: 0, dataFolder: folder, configure: { $0.allowedOrigins = ServedFeed.loopbackOrigins })
            ids = try await feed.addItems(imagesAt: ["/a.jpg", "/b.jpg"], on: origin)
            for id in ids { #expect(!isPlaceholder(try await feed.thumbnail(id))) }
            await feed.stop(keepingData: true)
            #expect(origin.requests(to: "/a.jpg") == 1 && origin.requests(to: "/b.jpg") == 1)
        }
        // Corrupt b's kept original; the origin is gone.
        let kept = try #require(ServedFeed.diskFile(in: folder, "originals", item: ids[1], suffix: ".original"))
        var bytes = try Data(contentsOf: kept)
        bytes[bytes.count / 2] ^= 0x5a
        try bytes.write(to: kept)
        let restarted = try await ServedFeed.start(items: 0, dataFolder: folder, configure: { $0.allowedOrigins = ServedFeed.loopbackOrigins })
        let double = try await restarted.thumbnail(ids[0], "2x")
        #expect(double.header("Content-Type") == "image/webp")
        #expect(try OriginImages.painter.info(of: double.body).width == 320)
        #expect(isPlaceholder(try await restarted.thumbnail(ids[1], "2x")), "a corrupt original must be detected, not used")
        #expect(!FileManager.default.fileExists(atPath: kept.path))
        let originals = try await restarted.adminJSON()["originals"] as? [String: Any]
        #expect(originals?["from_disk"] as? Int == 1)
        await restarted.stop(keepingData: true)
    }

    @Test func servingAPageWarmsTheNextPages() async throws {
        let jpeg = try await OriginImages.jpeg(seed: 5)
        try await withOrigin { origin in
            let paths = (0..<15).map { "/p\($0).jpg" }
            for path in paths { origin.script(path, .delay(.milliseconds(100), then: .respond(contentType: "image/jpeg", body: jpeg))) }
            try await ServedFeed.with(
                items: 0, pageSize: 5,
                configure: {
                    $0.prewarm.pages = 2; $0.allowedOrigins = ServedFeed.loopbackOrigins
                }
            ) { feed in
                let ids = try await feed.addItems(imagesAt: paths, on: origin)
                #expect(try await feed.get("/", headers: [Self.returningReader]).status == 200)
                // The page the reader landed on (its rows below the first screen),
                // then pages 2 and 3 (items 5…14), get warmed without any request for them.
                // Wait (patiently: the machine may be busy) until the three page jobs are done.
                var done = 0
                for _ in 0..<600 where done < 3 {
                    done = (try await feed.adminJSON()["prewarm"] as? [String: Any])?["done"] as? Int ?? 0
                    if done < 3 { try await Task.sleep(for: .milliseconds(100)) }
                }
                #expect(done == 3)
                #expect(paths.allSatisfy { origin.requests(to: $0) == 1 }, "each warmed item's original fetched once")
                let before = try await feed.adminJSON()["hits"] as? Int ?? 0
                for id in ids { #expect(try await feed.thumbnail(id).status == 200) }
                let after = try await feed.adminJSON()
                #expect((after["hits"] as? Int ?? 0) - before == 15, "every thumbnail of pages 1 to 3 was already warm")
            }
        }
    }
}

extension ThumbnailServingTests {
    @Test func doubleDensityIsWarmedOnlyOnceADenseScreenAsksForIt() async throws {
        let jpeg = try await OriginImages.jpeg(seed: 6)
        try await withOrigin { origin in
            let paths = (0..<15).map { "/d\($0).jpg" }
            for path in paths { origin.script(path, .respond(contentType: "image/jpeg", body: jpeg)) }
            try await ServedFeed.with(
                items: 0, pageSize: 5,
                configure: {
                    $0.prewarm.pages = 1; $0.allowedOrigins = ServedFeed.loopbackOrigins
                }
            ) { feed in
                let ids = try await feed.addItems(imagesAt: paths, on: origin)
                func warmedPages(_ count: Int) async throws {
                    var done = 0
                    for _ in 0..<600 where done < count {
                        done = (try await feed.adminJSON()["prewarm"] as? [String: Any])?["done"] as? Int ?? 0
                        if done < count { try await Task.sleep(for: .milliseconds(100)) }
                    }
                    #expect(done == count)
                }
                func entries() async throws -> Int {
                    (try await feed.adminJSON()["memory"] as? [String: Any])?["entries"] as? Int ?? -1
                }
                // Page 1 served (the landing page) and page 2 warmed: no dense screen seen yet, so 1x only.
                #expect(try await feed.get("/", headers: [Self.returningReader]).status == 200)
                try await warmedPages(2)
                #expect(try await entries() == 10)
                // A browser on a dense screen asks for a 2x; from now on pre-warm makes both.
                #expect(try await feed.thumbnail(ids[0], "2x").status == 200)
                #expect(try await feed.get("/?page=2", headers: [Self.returningReader]).status == 200)
                try await warmedPages(3)
                #expect(try await entries() == 10 + 1 + 10, "pages 1 and 2's 1x, the 2x asked for, page 3's 1x and 2x")
            }
        }
    }
}

extension ServedFeed {
    func adminJSON() async throws -> [String: Any] {
        let response = try await get("/admin/cache", headers: [("Authorization", "Bearer test-admin-token-of-32-characters")])
        return try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] ?? [:]
    }
}

extension ThumbnailServingTests {
    /// A reader whose browser came back with the cookie an earlier visit gave it:
    /// only such a reader is tracked and warmed ahead of.
    static let returningReader = ("Cookie", "wf=00000000c0ffee00")

    @Test func aReturningReaderOrABrowserNavigatingIsTrackedNeverOtherAnonymousRequests() async throws {
        try await ServedFeed.with(items: 100, pageSize: 5, configure: { $0.prewarm.pages = 2 }) { feed in
            func readers() async throws -> Int {
                (try await feed.adminJSON()["prewarm"] as? [String: Any])?["readers"] as? Int ?? -1
            }
            for page in 1...20 {
                let response = try await feed.get("/?page=\(page)")
                #expect(response.status == 200)
                #expect(response.header("Set-Cookie")?.hasPrefix("wf=") == true, "a first visit is given the cookie")
            }
            #expect(try await feed.get("/fragment?page=3").status == 200)
            #expect(try await readers() == 0, "no cookie came back: nobody is tracked")
            #expect(try await feed.get("/?page=4", headers: [Self.returningReader]).status == 200)
            #expect(try await readers() == 1)
            // A browser's first visit says it navigates: its reader is about to scroll.
            let first = try await feed.get("/", headers: [("Sec-Fetch-Mode", "navigate"), ("Sec-Fetch-Dest", "document")])
            #expect(first.header("Set-Cookie")?.hasPrefix("wf=") == true)
            #expect(try await readers() == 2)
        }
    }
}
