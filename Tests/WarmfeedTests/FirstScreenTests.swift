import Foundation
import HTTPTestClient
import SQLiteStore
import Testing
import WarmfeedCore

@testable import Warmfeed

/// The first visitor of a fresh server finds page 1 warm: a store with items
/// but nothing cached and nothing fetched, the server just started, and no
/// reader yet. The origin is a real loopback server.
@Suite struct FirstScreenTests {
    @Test func pageOneIsWarmedFromTheStartAndTheOperatorIsTold() async throws {
        let jpeg = try await OriginImages.jpeg(seed: 11)
        try await withOrigin { origin in
            let paths = (0..<30).map { "/first\($0).jpg" }
            for path in paths { origin.script(path, .respond(contentType: "image/jpeg", body: jpeg)) }
            let data = try Self.dataFolder(withItemsAt: paths, on: origin)
            defer { try? FileManager.default.removeItem(atPath: data) }
            let feed = try await ServedFeed.start(items: 0, pageSize: 10, dataFolder: data, configure: { $0.allowedOrigins = ServedFeed.loopbackOrigins })
            do {
                // Nobody has asked for anything: the server warms page 1 by itself.
                var seconds: Double?
                for _ in 0..<600 {
                    let prewarm = try await feed.adminJSON()["prewarm"] as? [String: Any]
                    seconds = prewarm?["page_one_warm_seconds"] as? Double
                    if seconds != nil { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                #expect(seconds != nil, "page 1 was never reported warm")
                #expect(
                    try await feed.get("/admin", headers: [("Authorization", "Bearer test-admin-token-of-32-characters")]).text.contains("page 1 warm after"))
                #expect(paths[..<10].allSatisfy { origin.requests(to: $0) == 1 }, "page 1's originals, each fetched once")

                // The first visitor's page and its thumbnails: every one from memory, none made now.
                let before = try await feed.adminJSON()
                let page = RenderedPage(try await feed.get("/").text)
                #expect(page.rows.count == 10)
                for row in page.rows {
                    let thumbnail = try await feed.thumbnail(try #require(Int64(row.id)))
                    #expect(thumbnail.status == 200 && !isPlaceholder(thumbnail))
                }
                let after = try await feed.adminJSON()
                let hits = (after["hits"] as? Int ?? 0) - (before["hits"] as? Int ?? 0)
                let misses = (after["misses"] as? Int ?? 0) - (before["misses"] as? Int ?? 0)
                #expect(hits == 10 && misses == 0, "page 1's thumbnails: \(hits) hits, \(misses) misses")
                await feed.stop()
            } catch {
                await feed.stop()
                throw error
            }
        }
    }

    /// A visitor who asks the moment the server listens: page 1 is answered
    /// once it is warm, so every thumbnail of it is a hit, though the origin
    /// takes 300 ms an original.
    @Test func theFirstVisitorAtTheFirstInstantGetsAWarmPageOne() async throws {
        let jpeg = try await OriginImages.jpeg(seed: 12)
        try await withOrigin { origin in
            let paths = (0..<10).map { "/instant\($0).jpg" }
            for path in paths { origin.script(path, .delay(.milliseconds(300), then: .respond(contentType: "image/jpeg", body: jpeg))) }
            let data = try Self.dataFolder(withItemsAt: paths, on: origin)
            defer { try? FileManager.default.removeItem(atPath: data) }
            // Held as long as the warm-up takes, however busy the machine: the count below must not hang on its speed.
            // The client waits as long (CI once took over 15 s here, with a build beside it).
            let feed = try await ServedFeed.start(
                items: 0, pageSize: 10, dataFolder: data,
                configure: {
                    $0.prewarm.pageOneHold = .seconds(120)
                    $0.allowedOrigins = ServedFeed.loopbackOrigins
                })
            do {
                let page = RenderedPage(try await feed.get("/", timeout: 130).text)
                #expect(page.rows.count == 10)
                let before = try await feed.adminJSON()
                for row in page.rows {
                    let thumbnail = try await feed.thumbnail(try #require(Int64(row.id)))
                    #expect(thumbnail.status == 200 && !isPlaceholder(thumbnail))
                }
                let after = try await feed.adminJSON()
                let hits = (after["hits"] as? Int ?? 0) - (before["hits"] as? Int ?? 0)
                #expect(hits == 10, "page 1's thumbnails, asked for at once after its page: \(hits) of 10 hits")
                #expect(paths.allSatisfy { origin.requests(to: $0) == 1 })
                await feed.stop()
            } catch {
                await feed.stop()
                throw error
            }
        }
    }

    /// A data folder whose store already holds an item for each of `paths` on
    /// `origin`, newest first, as a seeded or imported data folder does before
    /// the server starts.
    static func dataFolder(withItemsAt paths: [String], on origin: FaultyOrigin) throws -> String {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-first-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        let store = try SQLiteFeedStore(path: data + "/feed.sqlite")
        try store.upsert(
            paths.enumerated().map { index, path in
                FeedItem(
                    guid: "first-\(index)", title: "Item \(index)", summary: "", imageURL: origin.url(path),
                    imageWidth: 1600, imageHeight: 1200, published: 1_000_000 - Int64(index))
            })
        return data
    }
}
