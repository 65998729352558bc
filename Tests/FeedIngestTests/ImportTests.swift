import FeedFixtures
import FeedImport
import Foundation
import HTTPTestClient
import OriginFetcher
import Testing

@testable import FeedIngest
@testable import SQLiteStore
@testable import WarmfeedCore

/// Imports into a real SQLite store in a fresh data folder, feeds read from
/// files and from a loopback origin that fails on purpose.
@Suite struct ImportTests {
    let posts = (1...5).map { (id: "post-\($0)", title: "Post number \($0)") }

    /// An importer as `warmfeed import` makes one: the SQLite store in `data`, a fetcher of its own.
    static func importer(in data: String) async throws -> Importer {
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        let store = try SQLiteFeedStore(path: data + "/feed.sqlite")
        return Importer(store: store, fetcher: OriginFetcher(maxConnectionsPerHost: 2), workFolder: URL(fileURLWithPath: data, isDirectory: true))
    }

    @Test func importingTwiceChangesNothingAndAnEditUpdatesInPlace() async throws {
        let data = ImportedFeeds.dataFolder()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let importer = try await Self.importer(in: data)
        let file = try ImportedFeeds.file(ImportedFeeds.rss(posts, textOnly: [2]))

        let first = try await importer.run(try ImportSource(file))
        #expect(first.format == .rss)
        #expect(first.written.inserted == 5)
        #expect(first.skippedCount == 0)
        let idsBefore = try await importer.store.page(.number(1), size: 10)?.items.map(\.id)

        let again = try await importer.run(try ImportSource(file))
        #expect(
            again.written
                == {
                    var s = UpsertSummary(); s.unchanged = 5; return s
                }())
        #expect(try await importer.store.count() == 5)

        var edited = posts
        edited[1].title = "Post number 2, corrected"
        try Data(ImportedFeeds.rss(edited, textOnly: [2]).utf8).write(to: URL(fileURLWithPath: file))
        let third = try await importer.run(try ImportSource(file))
        #expect(third.written.updated == 1)
        #expect(third.written.unchanged == 4)
        let page = try #require(try await importer.store.page(.number(1), size: 10))
        #expect(page.items.map(\.id) == idsBefore, "updated in place: same ids, same order")
        #expect(page.items[1].title == "Post number 2, corrected")
        #expect(page.items[1].imageURL == "https://blog.example/img/post-2.jpg", "relative media URL resolved against the channel link")
        #expect(page.items[2].imageURL == nil, "the text-only item")
    }

    @Test func aJSONFeedImportsAndOrdersByDate() async throws {
        let data = ImportedFeeds.dataFolder()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let importer = try await Self.importer(in: data)
        let report = try await importer.run(try ImportSource(ImportedFeeds.file(ImportedFeeds.jsonFeed(posts), name: "feed.json")))
        #expect(report.format == .jsonFeed)
        #expect(report.written.inserted == 5)
        let page = try #require(try await importer.store.page(.number(1), size: 10))
        #expect(page.items.map(\.guid) == posts.map(\.id))
        #expect(page.items[0].imageURL == "https://json.example/post-1.png")
    }

    @Test func aFailedImportLeavesTheStoreAsItWas() async throws {
        let data = ImportedFeeds.dataFolder()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let importer = try await Self.importer(in: data)
        _ = try await importer.run(try ImportSource(ImportedFeeds.file(ImportedFeeds.rss(posts))))
        let before = try await importer.store.page(.number(1), size: 10)?.items

        let bad: [(String, String)] = [
            ("", "empty source"),
            ("<!doctype html><html><head><title>Blog</title></head><body><p>hi</p></body></html>", "HTML"),
            ("plain words, no markup", "not a feed"),
            (#"{"version": "https://jsonfeed.org/version/1.1", "items": "nope"}"#, "items"),
        ]
        for (text, expected) in bad {
            await #expect(throws: ImportError.self, "\(expected)") {
                _ = try await importer.run(try ImportSource(ImportedFeeds.file(text)))
            }
            do {
                _ = try await importer.run(try ImportSource(ImportedFeeds.file(text)))
            } catch {
                #expect("\(error)".localizedCaseInsensitiveContains(expected), "\(error)")
            }
        }
        #expect(try await importer.store.page(.number(1), size: 10)?.items == before)
    }

    @Test func theSummarySaysWhatWasSkippedAndWhereWhileTheRestImports() async throws {
        let data = ImportedFeeds.dataFolder()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let importer = try await Self.importer(in: data)
        let feed = """
            <?xml version="1.0"?>
            <rss version="2.0"><channel><title>Mixed</title><link>https://mixed.example/</link>
            <item><guid>good-1</guid><title>Good one</title></item>
            <item><guid>empty</guid><title>  </title></item>
            <item><guid>broken</guid><title>Broken</b></title></item>
            <item><guid>good-2</guid><title>Good two</title></item>
            </channel></rss>
            """
        let report = try await importer.run(try ImportSource(ImportedFeeds.file(feed)))
        #expect(report.written.inserted == 2)
        #expect(try await importer.store.page(.number(1), size: 10)?.items.map(\.guid).sorted() == ["good-1", "good-2"])
        let summary = report.summaryLines.joined(separator: "\n")
        #expect(summary.contains("imported 2, updated 0, unchanged 0 in"), "\(summary)")
        #expect(summary.contains("1 × an empty item: no title, text, link or image (line 4)"), "\(summary)")
        #expect(summary.contains("(line 5)"), "the malformed item is named by its line: \(summary)")
    }

    @Test func sourcesThatDoNotExistOrAreNotAllowedAreRefused() {
        #expect(throws: ImportError.self) { try ImportSource("/no/such/feed.xml") }
        #expect(throws: ImportError.self) { try ImportSource("ftp://example.org/feed.xml") }
        #expect(throws: ImportError.self) { try ImportSource("gopher://example.org/") }
    }

    @Test func urlFailuresAreClearAndWriteNothing() async throws {
        let origin = try FaultyOrigin()
        defer { origin.stop() }
        let data = ImportedFeeds.dataFolder()
        defer { try? FileManager.default.removeItem(atPath: data) }
        var limits = Importer.feedLimits
        limits.totalTimeout = .seconds(2)
        let fetcher = OriginFetcher(maxConnectionsPerHost: 2)
        defer { fetcher.shutdown() }
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        let store = try SQLiteFeedStore(path: data + "/feed.sqlite")
        let importer = Importer(store: store, fetcher: fetcher, workFolder: URL(fileURLWithPath: data), limits: limits)
        origin.script("/404", .respond(status: 404, contentType: "text/plain", body: Array("gone".utf8)))
        origin.script("/loop", .redirect(to: "/loop"))
        origin.script("/slow", .delay(.seconds(5), then: .respond(body: Array(ImportedFeeds.rss(posts).utf8))))
        for (path, expected) in [("/404", "answered 404"), ("/loop", "redirects too many times"), ("/slow", "timed out")] {
            do {
                _ = try await importer.run(try ImportSource(origin.url(path)))
                Issue.record("\(path) imported")
            } catch {
                #expect("\(error)".contains(expected), "\(path): \(error)")
            }
        }
        #expect(try await store.count() == 0)
        // The feed was asked for as a feed, by the one client every fetch names.
        #expect(origin.lastRequestHeader("User-Agent", to: "/404") == OriginFetcher.userAgent)
        #expect(origin.lastRequestHeader("Accept", to: "/404")?.hasPrefix("application/feed+json") == true)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: data).filter { $0.contains("download") }
        #expect(leftovers.isEmpty, "downloads are removed: \(leftovers)")
    }
}
