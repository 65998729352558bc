import Foundation
import PageFiles
import PostgresWire
import Testing

@testable import PostgresStore
@testable import WarmfeedCore

/// A PostgreSQL node's own copy of the feed's prepared rows (issue 35, item
/// 4): it follows writes made by another node, never answers a page it has
/// not caught up with, comes back after its connections are cut, and is
/// rebuilt when its files are removed or cut. Every page it answers is the
/// page PostgreSQL answers, byte for byte.
@Suite(.serialized, .enabled(if: Backend.postgresAdmin != nil)) struct NodeCopyTests {
    static let tag: UInt32 = 0x5EED_0001

    /// A row as the tests prepare it: the item's id and title, sealed.
    static func render(_ item: FeedItem) -> [UInt8]? {
        PreparedRowTag.seal(Array("<li id=\(item.id ?? 0)>\(item.title)</li>".utf8), tag: tag)
    }

    static func items(_ range: ClosedRange<Int>, title: String = "item") -> [FeedItem] {
        range.map {
            FeedItem(guid: "g\($0)", title: "\(title) \($0)", summary: "", imageURL: $0 % 3 == 0 ? "https://img/\($0).jpg" : nil, published: Int64($0) * 1000)
        }
    }

    /// Every row the feed has, prepared by the writing node.
    static func prepareAll(_ store: PostgresFeedStore) async throws {
        var after: Int64 = 0
        while let batch = try await store.prepareRows(tag: tag, sweep: false, after: after, limit: 500, render: render) { after = batch.last }
    }

    /// What a page is, for comparing two answers: its rows (id, preview, picture, bytes) and its frame.
    static func shape(_ page: PreparedPage?) -> String? {
        guard let page else { return nil }
        let rows = page.rows.map { row in
            "\(row.id)/\(row.preview.map(String.init) ?? "-")/\(row.hasPicture)/\(String(decoding: page.bytes[row.prepared], as: UTF8.self))/\(row.itemIndex == nil)"
        }
        return "\(page.total) \(page.firstPosition) \(String(describing: page.older)) \(String(describing: page.newer)) \(rows)"
    }

    /// The requests compared: every page by number, and the pages after and before a few cursors.
    static func requests(_ store: PostgresFeedStore, size: Int) async throws -> [PageRequest] {
        let count = try await store.count()
        var requests = (1...max(1, (count + size - 1) / size + 1)).map { PageRequest.number($0) }
        for number in [1, 2, count / size] where number >= 1 {
            let page = try #require(try await store.preparedPage(.number(number), size: size, tag: tag))
            if let older = page.older { requests.append(.after(older)) }
            if let newer = page.newer { requests.append(.before(newer)) }
        }
        return requests
    }

    /// Opens a node with a copy in `folder`, running (listening and keeping its copy).
    static func node(_ url: String, folder: String) async throws -> (store: PostgresFeedStore, running: Task<Void, Never>) {
        let store = try await PostgresFeedStore.open(try PostgresLocation(url), queryTimeout: TestStore.patience, copyFolder: folder, logger: testLogger)
        return (store, Task { await store.run() })
    }

    /// Waits until `node`'s copy answers every request as `writer` (PostgreSQL) does; returns the differences left.
    static func waitUntilTheCopyAgrees(_ node: PostgresFeedStore, with writer: PostgresFeedStore, size: Int) async throws -> [String] {
        var differences: [String] = []
        for _ in 0..<200 {
            differences = []
            for request in try await requests(writer, size: size) {
                let truth = shape(try await writer.preparedPage(request, size: size, tag: tag))
                // While the node's listener is reconnecting, the store is down: no page, from the copy either.
                guard let copied = try? node.preparedPageWithoutWaiting(request, size: size, tag: tag) else {
                    differences.append("\(request): the copy did not answer")
                    continue
                }
                if shape(copied) != truth { differences.append("\(request): \(shape(copied) ?? "nil") != \(truth ?? "nil")") }
            }
            if differences.isEmpty { return [] }
            try await Task.sleep(for: .milliseconds(100))
        }
        return differences
    }

    static func folder() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-copy-\(UUID().uuidString)").path
    }

    @Test func aNodesCopyFollowsWritesFromAnotherNode() async throws {
        try await TestStore.with(.postgres) { made in
            let writer = try #require(made.store as? PostgresFeedStore)
            try writer.upsert(Self.items(1...250))
            try await Self.prepareAll(writer)
            let folder = Self.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let (node, running) = try await Self.node(made.address, folder: folder)
            #expect(try await Self.waitUntilTheCopyAgrees(node, with: writer, size: 20) == [])
            #expect(try await Self.waitUntilTheCopyAgrees(node, with: writer, size: 7) == [])
            let status = try #require(node.status.copy)
            #expect(status.rebuilds == 1 && status.rowsCopied == 250 && status.pagesFromCopy > 0)

            // Another node writes: new items at the top, one retitled (its row
            // not prepared until the writer prepares it again), one moved down.
            var moved = Self.items(100...100)[0]
            moved.published = 1
            let retitled = Self.items(50...50, title: "retitled")
            try writer.upsert(Self.items(251...260) + retitled + [moved])
            try await Self.prepareAll(writer)
            #expect(try await Self.waitUntilTheCopyAgrees(node, with: writer, size: 20) == [])
            #expect(node.status.copy?.rebuilds == 1, "a write is caught up, not rebuilt")
            #expect(node.status.copy?.writes == writer.revision)
            running.cancel()
            await running.value
        }
    }

    /// The same, step by step: a node not running (no listener, no keeper)
    /// catches its copy up by hand, so the moment between hearing of a write
    /// and copying it lasts as long as the test wants.
    @Test func aCopyBehindAWriteTheNodeHeardOfAnswersNoPage() async throws {
        try await HandKeptNode.with(items: 1...100) { _, writer, hand in
            let node = hand.node
            #expect(try await Self.waitUntilTheCopyAgrees(node, with: writer, size: 10) == [])

            var moved = Self.items(40...40)[0]
            moved.published = 1
            try writer.upsert(Self.items(101...105) + [moved])
            try await Self.prepareAll(writer)
            // Heard of, not yet copied: no page from the copy, not even one the write left alone.
            node.heard(writes: writer.revision)
            for request in try await Self.requests(writer, size: 10) {
                #expect(try node.preparedPageWithoutWaiting(request, size: 10, tag: Self.tag) == nil, "\(request) came from a copy behind")
            }
            try hand.catchUp()
            #expect(try await Self.waitUntilTheCopyAgrees(node, with: writer, size: 10) == [])
            #expect(node.status.copy?.writes == writer.revision)
            await node.close()
        }
    }

    /// A write that commits after a later one (its transaction began first,
    /// and was still running when the copy caught up with the later one) is
    /// copied all the same, at the next catch-up.
    @Test func aWriteThatCommitsAfterALaterOneIsCopiedToo() async throws {
        try await HandKeptNode.with(items: 1...30) { made, writer, hand in
            let node = hand.node
            let parameters = try PostgresLocation(made.address).libpqParameters(application: "test")

            // The slow transaction writes first and commits last.
            let slow = try PQConnection(parameters, deadline: .now + .seconds(30))
            defer { slow.close() }
            try slow.query("BEGIN", until: .now + .seconds(30))
            try slow.query("UPDATE item SET preview = 4242 WHERE id = 5", until: .now + .seconds(30))
            try await writer.setPreviews([6: 6161])
            try hand.catchUp()
            try slow.query("COMMIT", until: .now + .seconds(30))
            try hand.catchUp()
            #expect(try await Self.waitUntilTheCopyAgrees(node, with: writer, size: 10) == [])
            let page = try #require(try node.preparedPageWithoutWaiting(.number(3), size: 10, tag: Self.tag) ?? nil)
            #expect(page.rows.first { $0.id == 5 }?.preview == 4242)
            #expect(page.rows.first { $0.id == 6 }?.preview == 6161)
            await node.close()
        }
    }

    /// Rows prepared again (new templates) leave their old bytes in the row
    /// file; past twice the bytes its records point at, the copy is made again.
    @Test func aRowFileGrownPastTwiceItsLiveRowsIsMadeAgain() async throws {
        try await HandKeptNode.with(items: 1...200, slack: 0) { _, writer, hand in
            let (node, copy) = (hand.node, hand.copy)
            let live = try #require(copy.index.liveRowBytes())
            #expect(live > 0 && copy.index.rows.size == live)
            // Half the rows prepared again: the file grows by half, and is kept.
            try await writer.forgetPreparedRows((1...100).map(Int64.init))
            try await Self.prepareAll(writer)
            try hand.catchUp()
            #expect(copy.index.rows.size > live && copy.status.rebuilds == 1)
            // Every row again: past twice the live bytes, made again from nothing.
            try await writer.forgetPreparedRows((1...200).map(Int64.init))
            try await Self.prepareAll(writer)
            try hand.catchUp()
            try hand.catchUp()
            #expect(copy.status.rebuilds == 2)
            #expect(copy.index.rows.size == live, "the file holds each row once again")
            #expect(try await Self.waitUntilTheCopyAgrees(node, with: writer, size: 10) == [])
            await node.close()
        }
    }

    @Test func aNodesCopyComesBackAfterItsConnectionsAreCut() async throws {
        try await TestStore.with(.postgres) { made in
            let writer = try #require(made.store as? PostgresFeedStore)
            try writer.upsert(Self.items(1...120))
            try await Self.prepareAll(writer)
            let folder = Self.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let (node, running) = try await Self.node(made.address, folder: folder)
            #expect(try await Self.waitUntilTheCopyAgrees(node, with: writer, size: 10) == [])
            // PostgreSQL ends the node's sessions, as a restart would; a write lands meanwhile.
            let admin = try PQConnection(try PostgresLocation(made.address).libpqParameters(application: "test"), deadline: .now + .seconds(30))
            defer { admin.close() }
            try admin.query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name IN ('warmfeed-copy', 'warmfeed-listen')",
                until: .now + .seconds(30))
            try writer.upsert(Self.items(121...140))
            try await Self.prepareAll(writer)
            #expect(try await Self.waitUntilTheCopyAgrees(node, with: writer, size: 10) == [])
            #expect(node.status.copy?.rebuilds == 1)
            running.cancel()
            await running.value
        }
    }

    @Test func aNodesCopyIsRebuiltWhenItsFilesAreRemovedOrCut() async throws {
        try await TestStore.with(.postgres) { made in
            let writer = try #require(made.store as? PostgresFeedStore)
            try writer.upsert(Self.items(1...150))
            try await Self.prepareAll(writer)
            let folder = Self.folder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            var (node, running) = try await Self.node(made.address, folder: folder)
            #expect(try await Self.waitUntilTheCopyAgrees(node, with: writer, size: 10) == [])
            running.cancel()
            await running.value

            // Removed while the node was away, and written meanwhile: rebuilt at the next start.
            try FileManager.default.removeItem(atPath: folder)
            try writer.upsert(Self.items(151...170))
            try await Self.prepareAll(writer)
            (node, running) = try await Self.node(made.address, folder: folder)
            #expect(try await Self.waitUntilTheCopyAgrees(node, with: writer, size: 10) == [])
            #expect(node.status.copy?.rebuilds == 1)

            // The row file cut under a running node: no page from bytes it no
            // longer holds, and the copy is rebuilt.
            let rows = (folder as NSString).appendingPathComponent("rows")
            #expect(truncate(rows, 1000) == 0)
            for request in try await Self.requests(writer, size: 10) {
                if let copied = try node.preparedPageWithoutWaiting(request, size: 10, tag: Self.tag) {
                    #expect(Self.shape(copied) == Self.shape(try await writer.preparedPage(request, size: 10, tag: Self.tag)), "\(request)")
                }
            }
            #expect(try await Self.waitUntilTheCopyAgrees(node, with: writer, size: 10) == [])
            #expect(node.status.copy?.rebuilds == 2)

            running.cancel()
            await running.value

            // A copy of another feed (another epoch) in the folder is not read, and is rebuilt.
            let other = try PageIndex(path: (folder as NSString).appendingPathComponent("pages"), rows: RowLog(path: rows))
            var header = try other.begin()
            header.origin = 12345
            try other.finish(header)
            node = try await PostgresFeedStore.open(
                try PostgresLocation(made.address), queryTimeout: TestStore.patience, copyFolder: folder, logger: testLogger)
            for request in try await Self.requests(writer, size: 10) {
                #expect(try node.preparedPageWithoutWaiting(request, size: 10, tag: Self.tag) == nil, "\(request)")
            }
            running = Task { [node] in await node.run() }
            #expect(try await Self.waitUntilTheCopyAgrees(node, with: writer, size: 10) == [])
            #expect(node.status.copy?.rebuilds == 1)
            running.cancel()
            await running.value
        }
    }
}

/// A node not running (no listener, no keeper thread), with a copy caught
/// up by hand (`catchUp`), so a test decides when the copy moves.
final class HandKeptNode {
    let node: PostgresFeedStore
    let copy: NodeCopy
    private let folder: String
    private let connection: PQConnection
    private let keeper: NodeCopyKeeper
    private var state = NodeCopyKeeper.State()

    init(_ made: TestStore, slack: Int64 = 64 << 20) async throws {
        folder = NodeCopyTests.folder()
        let location = try PostgresLocation(made.address)
        node = try await PostgresFeedStore.open(location, queryTimeout: TestStore.patience, copyFolder: folder, logger: testLogger)
        copy = try #require(node.copy)
        connection = try PQConnection(location.libpqParameters(application: "test"), deadline: .now + .seconds(30))
        keeper = NodeCopyKeeper(store: node, copy: copy, starting: false, slack: slack)
    }

    /// A PostgreSQL feed of `items`, prepared, and a node beside it kept by
    /// hand, its copy caught up once; released after `body`.
    static func with(
        items: ClosedRange<Int>, slack: Int64 = 64 << 20, _ body: (TestStore, PostgresFeedStore, HandKeptNode) async throws -> Void
    ) async throws {
        try await TestStore.with(.postgres) { made in
            let writer = try #require(made.store as? PostgresFeedStore)
            try writer.upsert(NodeCopyTests.items(items))
            try await NodeCopyTests.prepareAll(writer)
            let hand = try await HandKeptNode(made, slack: slack)
            defer { hand.release() }
            try hand.catchUp()
            try await body(made, writer, hand)
        }
    }

    func catchUp() throws {
        try keeper.catchUp(copy, for: node, on: connection, state: &state)
    }

    /// Closes the connection and removes the copy's files (the test closes the node).
    func release() {
        connection.close()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
