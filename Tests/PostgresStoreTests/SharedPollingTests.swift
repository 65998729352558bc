import FeedFixtures
import Foundation
import HTTPTestClient
import Logging
import OriginFetcher
import Testing

@testable import FeedIngest
@testable import PostgresStore
@testable import WarmfeedCore

/// Nodes sharing one PostgreSQL share the polling: each takes a place, each
/// host's sources are polled by one node, and a node that goes leaves its
/// hosts to the others. Real pollers, real loopback feed servers (a host
/// each), one real database.
@Suite(.serialized) struct SharedPollingTests {
    @Test func eachNodeTakesTheLowestFreePlaceAndSeesTheOthers() async throws {
        guard Backend.postgresAdmin != nil else { return }
        try await TestStore.with(.postgres) { made in
            let a = try #require(await made.store.pollingShare())
            #expect(a == PollingShare(place: 0, places: [0]))
            #expect(a.readsLists)
            let other = try await made.another()
            let b = try #require(await other.pollingShare())
            #expect(b == PollingShare(place: 1, places: [0, 1]))
            #expect(!b.readsLists, "one node reads the lists")
            #expect(await made.store.pollingShare() == PollingShare(place: 0, places: [0, 1]), "a place stays with its holder, and it sees the new one")
            await made.store.close()
            let alone = try #require(await other.pollingShare())
            #expect(alone == PollingShare(place: 1, places: [1]), "the holder left: its place is gone at the next ask")
            #expect(alone.readsLists, "the lists pass to the first place alive")
            let third = try await made.another()
            #expect(await third.pollingShare() == PollingShare(place: 0, places: [0, 1]), "a node that comes takes the lowest free place")
            await third.close()
            await other.close()
        }
    }

    @Test func everyHostIsPolledByOneNodeOncePerIntervalAndMovesWhenItsNodeGoes() async throws {
        guard Backend.postgresAdmin != nil else { return }
        // Eight hosts, two feeds each, answering 304 to the validators they gave.
        var feeds: [(origin: FaultyOrigin, path: String)] = []
        for n in 1...8 {
            let origin = try FaultyOrigin(host: "127.0.0.\(n)")
            for name in ["a", "b"] {
                let path = "/\(name).xml"
                let body = Array(ImportedFeeds.rss([(id: "\(name)\(n)-1", title: "Entry \(name) \(n)")], base: "https://h\(n).example").utf8)
                origin.script(path, .conditional(etag: "\"\(name)\(n)\"", lastModified: nil, body: body, contentType: "application/rss+xml"))
                feeds.append((origin, path))
            }
        }
        let urls = feeds.map { $0.origin.url($0.path) }
        let list = try ImportedFeeds.file(urls.joined(separator: "\n") + "\n", name: "planet.txt")
        let asked = { (url: String) -> Int in
            let feed = feeds[urls.firstIndex(of: url)!]
            return feed.origin.requests(to: feed.path)
        }
        try await TestStore.with(.postgres) { made in
            var nodes = [try Node(made.store, list: list)]
            for _ in 1...2 { nodes.append(try Node(try await made.another(), list: list)) }
            // Each takes its place before any polls, so the first passes share the hosts.
            var places: [Int] = []
            for node in nodes { places.append(try #require(await node.store.pollingShare()).place) }
            #expect(places == [0, 1, 2])
            // The first place reads the list and adds the sources; the others then read them.
            for node in nodes { _ = await node.poller.firstPass() }
            try expectShared(nodes, among: places, urls: urls)
            #expect(try await made.store.sources().count == 16)
            // (A first pass that outlasts the 2 s interval on CI's loaded cores asks its sources again: at least once.)
            for url in urls { #expect(asked(url) >= 1, "\(url) is asked in the first passes, by its host's node") }

            let loops = nodes.map { node in Task { try await node.poller.run() } }
            try await Task.sleep(for: .seconds(1))
            let before = urls.map(asked)
            try await Task.sleep(for: .seconds(8))
            let during = zip(urls.map(asked), before).map { $0 - $1 }
            // Polled every 2 s: four times in 8 s, give or take one at each end (two nodes would make eight).
            for (url, count) in zip(urls, during) { #expect((2...5).contains(count), "\(url) asked \(count) times in four intervals") }
            try expectShared(nodes, among: places, urls: urls)

            // The third node goes: its hosts move to the other two, which poll them with the validators it kept.
            loops[2].cancel()
            try await loops[2].value
            await nodes[2].store.close()
            let moved = urls.filter { PollingShare.owner(of: host($0), among: places) == 2 }
            let movedBefore = moved.map(asked)
            let remaining = Array(places.prefix(2))
            let settled = await eventually(.seconds(30)) {
                (try? expectShared(Array(nodes.prefix(2)), among: remaining, urls: urls, recording: false)) != nil
            }
            #expect(settled, "the two nodes left share every host")
            if !moved.isEmpty {
                #expect(await eventually(.seconds(15)) { zip(moved.map(asked), movedBefore).allSatisfy { $0 > $1 } }, "the moved hosts are polled again")
            }
            for loop in loops.prefix(2) { loop.cancel() }
            for loop in loops.prefix(2) { try await loop.value }
            for feed in feeds {
                #expect(feed.origin.lastRequestHeader("If-None-Match", to: feed.path) != nil, "a poll after the first is conditional, wherever it ran")
            }
            await nodes[1].store.close()
        }
    }

    /// A node: a store of its own on the shared database, and a poller of the list every 2 s.
    final class Node: Sendable {
        let store: any FeedStore
        let poller: SourcePoller

        init(_ store: any FeedStore, list: String) throws {
            self.store = store
            let data = ImportedFeeds.dataFolder()
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
            let fetcher = OriginFetcher(maxConnectionsPerHost: 2)
            var logger = Logger(label: "warmfeed.shared-polling-test")
            logger.logLevel = .critical
            let configuration = SourcesConfiguration(specs: [list], refresh: .seconds(2))
            poller = SourcePoller(
                configuration,
                importer: Importer(
                    store: store, fetcher: fetcher, workFolder: URL(fileURLWithPath: data), limits: SourcePoller.pollLimits(maxBytes: 1 << 20),
                    writeWindow: configuration.writeWindow),
                fetcher: fetcher, store: store, newItems: nil, logger: logger)
        }
    }

    /// The host a source's URL names, as the poller keys it.
    func host(_ url: String) -> String {
        SourceURL.host(of: .url(url))
    }

    /// Each node polls exactly the sources of the hosts its place owns among `places`, and together every source.
    func expectShared(_ nodes: [Node], among places: [Int], urls: [String], recording: Bool = true) throws {
        var seen: [String: Int] = [:]
        for (node, place) in zip(nodes, places) {
            let polled = Set(node.poller.sourceStatuses().map(\.url))
            let owned = Set(urls.filter { PollingShare.owner(of: host($0), among: places) == place })
            if recording {
                #expect(polled == owned, "place \(place) polls the sources of its hosts")
            } else if polled != owned {
                throw Unsettled()
            }
            for url in polled { seen[url, default: 0] += 1 }
        }
        if recording { #expect(seen.keys.sorted() == urls.sorted() && seen.values.allSatisfy { $0 == 1 }, "every source polled by one node") }
    }

    struct Unsettled: Error {}

    func eventually(_ limit: Duration, _ condition: () async -> Bool) async -> Bool {
        let end = ContinuousClock.now + limit
        while ContinuousClock.now < end {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return await condition()
    }
}
