import FeedFixtures
import FeedImport
import Foundation
import HTTPTestClient
import Logging
import OriginFetcher
import Testing

@testable import FeedIngest
@testable import SQLiteStore
@testable import WarmfeedCore

/// The poller against real loopback feed servers (two hosts: 127.0.0.1 and
/// 127.0.0.2) and a real SQLite store: lists, the river, and politeness.
@Suite(.serialized) struct SourcePollerTests {
    /// An RSS feed titled `title` (site `site`) of entries `ids`, each dated by its number.
    static func feed(_ title: String, site: String = "https://site.example/", ids: [Int], prefix: String = "e", ttl: Int? = nil) -> [UInt8] {
        var xml = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>\(title)</title><link>\(site)</link><description>d</description>"
        if let ttl { xml += "<ttl>\(ttl)</ttl>" }
        for id in ids {
            xml += "<item><guid>\(prefix)\(id)</guid><title>\(title) entry \(id)</title><link>\(site)\(id)</link>"
            xml += "<pubDate>\(Self.date(id))</pubDate></item>"
        }
        return Array((xml + "</channel></rss>").utf8)
    }

    /// A date that grows with `n`: entry n is n minutes after midnight, 1 Oct 2024.
    static func date(_ n: Int) -> String {
        String(format: "Tue, 01 Oct 2024 %02d:%02d:00 GMT", n / 60, n % 60)
    }

    /// A poller over a fresh SQLite store, polling `specs` every `refresh`.
    final class Polling: Sendable {
        let store: SQLiteFeedStore
        let poller: SourcePoller
        let data: String

        init(
            _ specs: [String], refresh: Duration? = nil, data: String = ImportedFeeds.dataFolder(),
            listedOnTheWeb: AddressPolicy = .publicOnly, firstPassLimit: Duration = .seconds(30), listRetry: Duration = .seconds(30)
        ) throws {
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
            self.data = data
            store = try SQLiteFeedStore(path: data + "/feed.sqlite")
            let fetcher = OriginFetcher(maxConnectionsPerHost: 2)
            var logger = Logger(label: "warmfeed.poller-test")
            logger.logLevel = .critical
            var configuration = SourcesConfiguration(specs: specs, refresh: refresh)
            configuration.listedOnTheWeb = listedOnTheWeb
            configuration.firstPassLimit = firstPassLimit
            configuration.listRetry = listRetry
            poller = SourcePoller(
                configuration,
                importer: Importer(
                    store: store, fetcher: fetcher, workFolder: URL(fileURLWithPath: data), limits: SourcePoller.pollLimits(maxBytes: 16 << 20),
                    writeWindow: configuration.writeWindow),
                fetcher: fetcher, store: store,
                newItems: nil, logger: logger)
        }

        /// Every item of the river, newest first.
        func river() async throws -> [FeedItem] {
            try await store.page(.number(1), size: 1000)?.items ?? []
        }

        /// Runs the poller's loop while `body` runs, and until it has stopped.
        func running<T>(_ body: () async throws -> T) async throws -> T {
            let loop = Task { try await poller.run() }
            do {
                let result = try await body()
                loop.cancel()
                try await loop.value
                return result
            } catch {
                loop.cancel()
                try? await loop.value
                throw error
            }
        }
    }

    /// Waits (polling every 50 ms, at most `limit`) until `condition` holds.
    static func eventually(_ limit: Duration = .seconds(20), _ condition: () async throws -> Bool) async rethrows -> Bool {
        let end = ContinuousClock.now + limit
        while ContinuousClock.now < end {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return try await condition()
    }

    @Test func everyFeedOfAnOPMLListJoinsTheRiverNamingItsSource() async throws {
        let one = try FaultyOrigin()
        let two = try FaultyOrigin(host: "127.0.0.2")
        one.script("/a.xml", .respond(contentType: "application/rss+xml", body: Self.feed("Blog A", site: "https://a.example/", ids: [1, 3, 5])))
        one.script("/b.xml", .respond(contentType: "application/rss+xml", body: Self.feed("Blog B", site: "https://b.example/", ids: [2, 4])))
        // The same entry ids as Blog B: another source, so other items.
        two.script("/c.xml", .respond(contentType: "application/rss+xml", body: Self.feed("Blog C", site: "javascript:alert(1)", ids: [2, 4])))
        let opml = """
            <?xml version="1.0"?><opml version="2.0"><head><title>Planet</title></head><body>
            <outline text="Friends"><outline text="A" xmlUrl="\(one.url("/a.xml"))"/>
              <outline text="Deeper"><outline text="B's list name" type="rss" xmlUrl="\(one.url("/b.xml"))" htmlUrl="https://b-from-list.example/"/></outline></outline>
            <outline text="C" xmlUrl="\(two.url("/c.xml"))"/>
            <outline text="broken" xmlUrl="javascript:alert(2)"/>
            </body></opml>
            """
        let list = try ImportedFeeds.file(opml, name: "planet.opml")
        let polling = try Polling([list])
        let results = await polling.poller.firstPass()
        #expect(results.count == 3)
        let river = try await polling.river()
        #expect(river.count == 7)
        #expect(river.first?.title == "Blog A entry 5", "merged by date")
        #expect(Set(river.dropFirst().prefix(2).map(\.title)) == ["Blog B entry 4", "Blog C entry 4"])
        #expect(Set(river.map(\.source)).count == 3)
        #expect(river.filter { $0.guid == "e2" }.count == 2)
        #expect(river.filter { $0.sourceTitle == "Blog B" }.allSatisfy { $0.sourceLink == "https://b.example/" })
        // A site a row may not link to is left out.
        #expect(river.filter { $0.sourceTitle == "Blog C" }.allSatisfy { $0.sourceLink == nil })
        let statuses = polling.poller.sourceStatuses()
        #expect(statuses.count == 3)
        #expect(statuses.allSatisfy { $0.state == "ok" && $0.lastFetchAt != nil && $0.nextPollAt != nil })
        #expect(polling.poller.status.listProblems == 1, "the broken entry is one problem: \(polling.poller.status.listLastProblem ?? "")")
    }

    @Test func anUnchangedFeedIsAskedConditionallyAndNeverDownloadedAgain() async throws {
        let origin = try FaultyOrigin()
        origin.script(
            "/feed.xml",
            .conditional(
                etag: "\"v1\"", lastModified: "Mon, 07 Oct 2024 10:00:00 GMT", body: Self.feed("Blog", ids: [1, 2]), contentType: "application/rss+xml"))
        let data = ImportedFeeds.dataFolder()
        do {
            let polling = try Polling([origin.url("/feed.xml")], refresh: .seconds(1), data: data)
            _ = await polling.poller.firstPass()
            #expect(try await polling.river().count == 2)
            try await polling.running {
                #expect(await Self.eventually { polling.poller.status.notModified >= 2 })
            }
            #expect(origin.lastRequestHeader("If-None-Match", to: "/feed.xml") == "\"v1\"")
        }
        // A new process on the same data folder, once the kept next poll is due, asks with the validators the last one kept.
        try await Task.sleep(for: .milliseconds(1500))
        let before = origin.requests(to: "/feed.xml")
        let again = try Polling([origin.url("/feed.xml")], refresh: .seconds(1), data: data)
        let results = await again.poller.firstPass()
        #expect(origin.requests(to: "/feed.xml") >= before + 1)
        #expect(origin.lastRequestHeader("If-None-Match", to: "/feed.xml") == "\"v1\"")
        #expect((try? results.first?.get())?.notModified == true)
        #expect(try await again.river().count == 2)
    }

    @Test func aHostsRetryAfterHoldsEverySourceOnIt() async throws {
        let held = try FaultyOrigin()
        let other = try FaultyOrigin(host: "127.0.0.2")
        held.script("/a.xml", .respond(status: 429, contentType: "text/plain", body: Array("slow down".utf8), headers: ["Retry-After: 8"]))
        held.script("/b.xml", .respond(contentType: "application/rss+xml", body: Self.feed("B", ids: [1])))
        other.script("/c.xml", .respond(contentType: "application/rss+xml", body: Self.feed("C", ids: [1])))
        let list = try ImportedFeeds.file("\(held.url("/a.xml"))\n\(held.url("/b.xml"))\n\(other.url("/c.xml"))\n", name: "list.txt")
        let polling = try Polling([list], refresh: .seconds(1))
        _ = await polling.poller.firstPass()
        let asked = held.requests(to: "/a.xml") + held.requests(to: "/b.xml")
        // When the hold ends, as the poller says (8 s after the 429 was received).
        let heldUntil = try #require(polling.poller.sourceStatuses().first { $0.url.hasSuffix("/a.xml") }?.hostHeldUntil)
        let end = try #require(ISO8601DateFormatter().date(from: heldUntil))
        try await polling.running {
            // The other host is polled every second meanwhile; the held one not at all.
            #expect(await Self.eventually(.seconds(4)) { other.requests(to: "/c.xml") >= 2 })
            let beforeEnd = end.timeIntervalSinceNow - 1
            if beforeEnd > 0 { try await Task.sleep(for: .seconds(beforeEnd)) }
            #expect(held.requests(to: "/a.xml") + held.requests(to: "/b.xml") == asked, "no request to a host inside its Retry-After")
            #expect(polling.poller.sourceStatuses().first?.state == "throttled", "the throttled source is listed first")
            #expect(polling.poller.status.hostsHeld == 1)
            held.script("/a.xml", .respond(contentType: "application/rss+xml", body: Self.feed("A", ids: [2])))
            #expect(await Self.eventually(.seconds(15)) { held.requests(to: "/a.xml") >= 2 && held.requests(to: "/b.xml") >= 2 })
            // A's entry lands once its poll has written it (the origin counts the request before).
            #expect(await Self.eventually(.seconds(15)) { (try? await polling.river().count) == 3 })
        }
    }

    @Test func aSourceTakenOutOfTheListLeavesTheRiverAndOneAddedJoins() async throws {
        let origin = try FaultyOrigin()
        origin.script("/a.xml", .respond(contentType: "application/rss+xml", body: Self.feed("A", ids: [1, 2], prefix: "a")))
        origin.script("/b.xml", .respond(contentType: "application/rss+xml", body: Self.feed("B", ids: [3, 4], prefix: "b")))
        origin.script("/c.xml", .respond(contentType: "application/rss+xml", body: Self.feed("C", ids: [5], prefix: "c")))
        let list = try ImportedFeeds.file("\(origin.url("/a.xml"))\n\(origin.url("/b.xml"))\n", name: "list.txt")
        let polling = try Polling([list], refresh: .seconds(60))
        _ = await polling.poller.firstPass()
        #expect(try await polling.river().map(\.guid) == ["b4", "b3", "a2", "a1"])
        // Edited while serving (another size: the list is read again), then SIGHUP.
        try Data("# the planet\n\(origin.url("/a.xml"))\n\(origin.url("/c.xml"))\n\n".utf8).write(to: URL(fileURLWithPath: list))
        try await polling.running {
            polling.poller.rereadLists()
            #expect(await Self.eventually { (try? await polling.river().map(\.guid)) == ["c5", "a2", "a1"] })
        }
        #expect(polling.poller.status.removed == 1)
        #expect(polling.poller.status.added == 3)
        #expect(try await polling.store.sources().count == 2)
        let ranks = try await polling.river().map(\.seq)
        #expect(ranks == [3, 2, 1])
    }

    @Test func aSlowOrBrokenSourceDelaysNoOther() async throws {
        let slow = try FaultyOrigin(host: "127.0.0.2")
        let healthy = try FaultyOrigin()
        slow.script("/drip.xml", .drip(length: 100_000, interval: .seconds(1), contentType: "application/rss+xml"))
        slow.script("/garbage.xml", .garbage(Array(repeating: 0x41, count: 4096)))
        slow.script("/500.xml", .respond(status: 500, contentType: "text/plain", body: Array("no".utf8)))
        healthy.script("/ok.xml", .respond(contentType: "application/rss+xml", body: Self.feed("OK", ids: [1])))
        let list = try ImportedFeeds.file(
            [slow.url("/drip.xml"), slow.url("/garbage.xml"), slow.url("/500.xml"), healthy.url("/ok.xml")].joined(separator: "\n"), name: "list.txt")
        let polling = try Polling([list], refresh: .seconds(1))
        try await polling.running {
            polling.poller.rereadLists()
            #expect(await Self.eventually(.seconds(5)) { healthy.requests(to: "/ok.xml") >= 3 }, "the healthy source is polled every second")
            #expect(await Self.eventually(.seconds(5)) { polling.poller.status.failures >= 2 })
        }
        let failing = polling.poller.sourceStatuses().filter { $0.state == "failing" }
        #expect(failing.count >= 2)
        #expect(failing.allSatisfy { $0.consecutiveFailures >= 1 && $0.lastResult != nil })
        #expect(try await polling.river().map(\.guid) == ["e1"])
    }

    @Test func aFeedURLIsAskedOnceToTellItIsAFeedAndToReadIt() async throws {
        let origin = try FaultyOrigin()
        origin.script("/feed.xml", .respond(contentType: "application/rss+xml", body: Self.feed("Blog", ids: [1, 2])))
        let polling = try Polling([origin.url("/feed.xml")])
        let results = await polling.poller.firstPass()
        #expect((try? results.first?.get())?.written.inserted == 2)
        #expect(origin.requests(to: "/feed.xml") == 1, "the body fetched to tell a feed from a list is the first poll's")
        #expect(try await polling.river().count == 2)
        let left = try FileManager.default.contentsOfDirectory(atPath: polling.data).filter { $0.hasSuffix(".download") }
        #expect(left.isEmpty, "no download is left behind: \(left)")
    }

    @Test func aFeedURLThatFailsAtTheFirstStartIsAskedAgainSoonNotAtTheNextDailyRead() async throws {
        let origin = try FaultyOrigin()
        origin.script("/feed.xml", .respond(status: 503, contentType: "text/plain", body: Array("starting".utf8)))
        // No --refresh: the lists are read daily; a value that could not be read is read again after 1 s, 2 s, 4 s…
        let polling = try Polling([origin.url("/feed.xml")], listRetry: .seconds(1))
        _ = await polling.poller.firstPass()
        #expect(try await polling.river().isEmpty)
        #expect(polling.poller.status.sources == 0, "not known to be a feed: nothing to poll yet")
        try await polling.running {
            #expect(await Self.eventually(.seconds(5)) { origin.requests(to: "/feed.xml") >= 2 }, "asked again within seconds")
            let failing = origin.requests(to: "/feed.xml")
            try await Task.sleep(for: .seconds(2))
            #expect(origin.requests(to: "/feed.xml") <= failing + 1, "backing off, not asking every second")
            origin.script("/feed.xml", .respond(contentType: "application/rss+xml", body: Self.feed("Blog", ids: [1, 2])))
            #expect(await Self.eventually(.seconds(15)) { (try? await polling.river().count) == 2 }, "in the river once it answers")
        }
        #expect(polling.poller.status.sources == 1)
    }

    @Test func aListOnTheWebReachesOnlyPublicAddressesAndWhatTheOperatorAllowed() async throws {
        let lists = try FaultyOrigin()
        let inside = try FaultyOrigin(host: "127.0.0.2")
        let allowed = try FaultyOrigin(host: "127.0.0.3")
        inside.script("/secret.xml", .respond(contentType: "application/rss+xml", body: Self.feed("Inside", ids: [1])))
        allowed.script("/feed.xml", .respond(contentType: "application/rss+xml", body: Self.feed("Allowed", ids: [2])))
        // A list someone else keeps names a loopback feed in another spelling, one the operator allowed, and one behind a redirect.
        lists.script("/moved.xml", .redirect(to: inside.url("/secret.xml")))
        lists.script(
            "/planet.txt",
            .respond(
                contentType: "text/plain",
                body: Array("http://2130706434:\(inside.port)/secret.xml\n\(allowed.url("/feed.xml"))\n\(lists.url("/moved.xml"))\n".utf8)))
        // The operator's own URL on loopback is reached, as the operator's values always are.
        lists.script("/own.xml", .respond(contentType: "application/rss+xml", body: Self.feed("Own", ids: [3])))
        let polling = try Polling(
            [lists.url("/planet.txt"), lists.url("/own.xml")], listedOnTheWeb: .publicOnly(allowing: [try #require(OriginAllowance("127.0.0.3"))]))
        let results = await polling.poller.firstPass()
        #expect(results.count == 4)
        #expect(inside.requests(to: "/secret.xml") == 0, "no request reaches an address the list's author chose")
        #expect(lists.requests(to: "/moved.xml") == 0, "nor the list's own host: it is loopback too")
        #expect(Set(try await polling.river().compactMap(\.sourceTitle)) == ["Allowed", "Own"])
        let failing = polling.poller.sourceStatuses().filter { $0.state == "failing" }
        #expect(failing.count == 2)
    }

    @Test func aHugeETagIsNeitherKeptNorSentBack() async throws {
        let origin = try FaultyOrigin()
        let huge = "\"" + String(repeating: "e", count: 50_000) + "\""
        origin.script("/feed.xml", .conditional(etag: huge, lastModified: nil, body: Self.feed("Blog", ids: [1]), contentType: "application/rss+xml"))
        let polling = try Polling([origin.url("/feed.xml")], refresh: .seconds(1))
        _ = await polling.poller.firstPass()
        try await polling.running {
            #expect(await Self.eventually { polling.poller.status.notModified >= 1 }, "the same body again is told by its hash")
        }
        #expect(origin.requests(to: "/feed.xml") >= 2)
        #expect(origin.lastRequestHeader("If-None-Match", to: "/feed.xml") == nil)
        let kept = try await polling.store.sources().compactMap(\.state).joined()
        #expect(kept.utf8.count < 4096, "the store keeps no 50 KB validator")
    }

    @Test func aPollUnderWayWhenTheFirstPassStopsWaitingFinishesAndIsNotAskedAgain() async throws {
        let origin = try FaultyOrigin()
        origin.script("/fast.xml", .respond(contentType: "application/rss+xml", body: Self.feed("Fast", ids: [1], prefix: "f")))
        origin.script(
            "/slow.xml", .delay(.seconds(5), then: .respond(contentType: "application/rss+xml", body: Self.feed("Slow", ids: [2], prefix: "s"))))
        let list = try ImportedFeeds.file("\(origin.url("/fast.xml"))\n\(origin.url("/slow.xml"))\n", name: "list.txt")
        // The fast one's items wait up to a second for others to be written with (`writeWindow`).
        let polling = try Polling([list], refresh: .seconds(60), firstPassLimit: .milliseconds(2500))
        let results = await polling.poller.firstPass()
        #expect(results.count == 1, "the first pass stopped waiting for the slow source")
        try await polling.running {
            #expect(await Self.eventually(.seconds(10)) { (try? await polling.river().count) == 2 }, "the slow poll finished and landed")
        }
        #expect(origin.requests(to: "/slow.xml") == 1, "not cut and asked again")
    }

    @Test func aChangedFeedBuildsOnlyTheEntriesItChangedAndASourceBackIsWrittenWhole() async throws {
        let origin = try FaultyOrigin()
        origin.script("/a.xml", .respond(contentType: "application/rss+xml", body: Self.feed("A", ids: [1, 2, 3], prefix: "a")))
        let list = try ImportedFeeds.file("\(origin.url("/a.xml"))\n", name: "list.txt")
        let polling = try Polling([list], refresh: .seconds(1))
        let first = try #require(try await polling.poller.firstPass().first?.get())
        #expect(first.entriesKnown == 0)
        // Entry 2 edited, entry 4 new: two built, two known.
        var edited = String(decoding: Self.feed("A", ids: [1, 2, 3, 4], prefix: "a"), as: UTF8.self)
        edited = edited.replacingOccurrences(of: "A entry 2<", with: "A entry two<")
        origin.script("/a.xml", .respond(contentType: "application/rss+xml", body: Array(edited.utf8)))
        let id = try #require(try await polling.store.sources().first?.id)
        let second = try #require(try await polling.poller.poll(id)?.get())
        #expect(second.entriesKnown == 2)
        #expect((second.written.inserted, second.written.updated, second.written.unchanged) == (1, 1, 2))
        #expect(try await polling.river().map(\.title) == ["A entry 4", "A entry 3", "A entry two", "A entry 1"])
        // Out of the list and back: its items left with it, so every entry is built and written again.
        try Data("# nothing\n".utf8).write(to: URL(fileURLWithPath: list))
        try await polling.running {
            polling.poller.rereadLists()
            // A list read empty is believed on its second read (a list-reading second apart here).
            #expect(await Self.eventually { (try? await polling.river().isEmpty) == true })
            try Data("\(origin.url("/a.xml"))\n\n".utf8).write(to: URL(fileURLWithPath: list))
            polling.poller.rereadLists()
            #expect(await Self.eventually { (try? await polling.river().count) == 4 })
        }
    }
}
