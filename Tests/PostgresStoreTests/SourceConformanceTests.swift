import Foundation
import Testing

@testable import FeedIngest
@testable import WarmfeedCore

/// Sources in every backend: items keyed by (source, guid), a source taken
/// out with its items, a source named anew, the poller's state kept.
@Suite(.serialized) struct SourceConformanceTests {
    /// Item `n` of `source`, published at `n` seconds.
    func entry(_ n: Int, of source: Int64, title: String? = nil) -> FeedItem {
        FeedItem(guid: "g\(n)", title: "Item \(n)", summary: "", published: Int64(n) * 1000, source: source, sourceTitle: title)
    }

    func sources(_ store: any FeedStore, _ keys: [String]) async throws -> [Int64] {
        try await store.writeOffPool { writer in try keys.map { try writer.source(key: $0) } }.0
    }

    @Test(arguments: Backend.available)
    func theSameGuidInTwoSourcesIsTwoItems(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let store = made.store
            let ids = try await sources(store, ["https://a.example/feed", "https://b.example/feed"])
            #expect(ids.count == 2 && ids[0] != ids[1] && !ids.contains(0))
            #expect(try await sources(store, ["https://b.example/feed"]) == [ids[1]], "a key names one source")
            let written = try await upsert(store, [entry(1, of: ids[0]), entry(1, of: ids[1]), entry(1, of: 0)])
            #expect(written.inserted == 3)
            let page = try #require(try await store.page(.number(1), size: 10))
            #expect(page.items.count == 3)
            #expect(Set(page.items.map(\.source)) == Set([ids[0], ids[1], 0]))
            #expect(page.items.map(\.seq) == [3, 2, 1])
        }
    }

    @Test(arguments: Backend.available)
    func theSameSourceAgainUpdatesAndNeverDuplicates(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let store = made.store
            let id = try #require(try await sources(store, ["/feeds/a.xml"]).first)
            try await upsert(store, (1...20).map { entry($0, of: id) })
            var edited = entry(7, of: id)
            edited.title = "edited"
            let again = try await upsert(store, (1...20).map { $0 == 7 ? edited : entry($0, of: id) })
            #expect(again.inserted == 0)
            #expect(again.updated == 1)
            #expect(again.unchanged == 19)
            #expect(try await store.count() == 20)
            let all = try #require(try await store.page(.number(1), size: 50))
            #expect(all.items.first { $0.guid == "g7" }?.title == "edited")
        }
    }

    @Test(arguments: Backend.available)
    func aSourceRemovedLeavesTheRiverWithDenseRanks(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let store = made.store
            let ids = try await sources(store, ["https://a.example/feed", "https://b.example/feed"])
            // Interleaved by date: a's items are the odd seconds, b's the even ones; b has the newest.
            try await upsert(store, stride(from: 1, through: 99, by: 2).map { entry($0, of: ids[0]) })
            try await upsert(store, stride(from: 2, through: 100, by: 2).map { entry($0, of: ids[1]) })
            let before = try #require(try await store.page(.number(1), size: 10))
            let revision = store.revision
            let (_, summary) = try await store.writeOffPool { writer in try writer.removeSource(ids[1]) }
            #expect(summary.removed == 50)
            #expect(store.revision > revision, "pages made before the removal are not served again")
            #expect(try await store.count() == 50)
            let all = try #require(try await store.page(.number(1), size: 100))
            #expect(all.total == 50)
            #expect(all.items.allSatisfy { $0.source == ids[0] })
            #expect(all.items.map(\.seq) == (1...50).reversed().map { Int64($0) })
            // Pages by number and by cursor agree, from a cursor a reader held before.
            let third = try #require(try await store.page(.number(3), size: 10))
            #expect(third.items.map(\.guid) == Array(all.items[20..<30]).map(\.guid))
            let next = try #require(try await store.page(.after(before.older!), size: 10))
            #expect(next.items.first?.guid == "g89", "the cursor's page starts just older than where it stood")
            #expect(next.firstPosition == 6)
            // The source is gone; its key would make a new one.
            #expect(try await store.sources().map(\.id) == [ids[0]])
            // The last page, and one past it.
            #expect(try await store.page(.number(5), size: 10)?.items.last?.guid == "g1")
            #expect(try await store.page(.number(6), size: 10) == nil)
        }
    }

    @Test(arguments: Backend.available)
    func aSourceNamedAnewRelabelsOnlyItsItems(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let store = made.store
            let ids = try await sources(store, ["https://a.example/feed", "https://b.example/feed"])
            try await upsert(store, (1...5).map { entry($0, of: ids[0], title: "A") } + (6...10).map { entry($0, of: ids[1], title: "B") })
            let revision = store.revision
            let (_, summary) = try await store.writeOffPool { writer in
                try writer.relabelSource(ids[0], title: "A, renamed", link: "https://a.example/")
            }
            #expect(summary.relabelled == 5)
            #expect(store.revision > revision)
            let all = try #require(try await store.page(.number(1), size: 20))
            #expect(all.items.filter { $0.source == ids[0] }.allSatisfy { $0.sourceTitle == "A, renamed" && $0.sourceLink == "https://a.example/" })
            #expect(all.items.filter { $0.source == ids[1] }.allSatisfy { $0.sourceTitle == "B" && $0.sourceLink == nil })
            // Named the same again: nothing changes, nothing is made again.
            let (_, same) = try await store.writeOffPool { writer in
                try writer.relabelSource(ids[0], title: "A, renamed", link: "https://a.example/")
            }
            #expect(same.relabelled == 0)
            #expect(!same.changedItems)
        }
    }

    @Test(arguments: Backend.available)
    func itemsOfNoSourceAreAdoptedWithTheirIdsAndRanks(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let store = made.store
            try await upsert(store, (1...10).map { entry($0, of: 0) })
            let before = try #require(try await store.page(.number(1), size: 20))
            let id = try #require(try await sources(store, ["/feeds/old.xml"]).first)
            _ = try await store.writeOffPool { writer in try writer.relabelSource(id, title: nil, link: nil, adoptingUnsourced: true) }
            // The same entries again, as the source: found, not doubled.
            let again = try await upsert(store, (1...10).map { entry($0, of: id) })
            #expect(again.inserted == 0)
            #expect(again.unchanged == 10)
            let after = try #require(try await store.page(.number(1), size: 20))
            #expect(after.items.map(\.id) == before.items.map(\.id))
            #expect(after.items.map(\.seq) == before.items.map(\.seq))
            #expect(after.items.allSatisfy { $0.source == id })
        }
    }

    @Test(arguments: Backend.available)
    func thePollersStateIsKeptWithTheSource(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let store = made.store
            let ids = try await sources(store, ["https://a.example/feed", "/feeds/b.xml"])
            _ = try await store.writeOffPool { writer in try writer.keepSource(ids[1], state: "{\"etag\":\"v1\"}") }
            let kept = try await store.sources()
            #expect(kept.map(\.key) == ["https://a.example/feed", "/feeds/b.xml"])
            #expect(kept.map(\.state) == [nil, "{\"etag\":\"v1\"}"])
            // Keeping state is not a change of the feed.
            let revision = store.revision
            let (_, summary) = try await store.writeOffPool { writer in try writer.keepSource(ids[0], state: "{}") }
            #expect(!summary.changedItems)
            #expect(store.revision == revision)
        }
    }

    @Test(arguments: Backend.available)
    func pollsWrittenTogetherLandInOneWriteAndEachHearsWhatItDid(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let store = made.store
            let ids = try await sources(store, ["https://a.example/feed", "https://b.example/feed", "https://c.example/feed"])
            try await upsert(store, (1...5).map { entry($0 * 10, of: ids[0]) })
            let group = GroupWriter(store: store, window: .milliseconds(300))
            let before = store.revision
            // a: 5 again with one edited and 2 new, dated between the others (ranks move); b: 3 new; c: renamed, 1 new.
            var edited = entry(30, of: ids[0])
            edited.title = "edited"
            let a = GroupWriter.Part(
                items: ((1...5).map { $0 == 3 ? edited : entry($0 * 10, of: ids[0]) } + [entry(15, of: ids[0]), entry(25, of: ids[0])]).map { ($0, false) })
            let b = GroupWriter.Part(items: [entry(11, of: ids[1]), entry(12, of: ids[1]), entry(13, of: ids[1])].map { ($0, false) })
            let c = GroupWriter.Part(items: [(entry(14, of: ids[2]), false)], relabel: GroupWriter.Relabel(id: ids[2], title: "C", link: nil))
            async let wa = group.write(a)
            async let wb = group.write(b)
            async let wc = group.write(c)
            let (sa, sb, sc) = try await (wa.get(), wb.get(), wc.get())
            #expect((sa.inserted, sa.updated, sa.unchanged) == (2, 1, 4))
            #expect((sb.inserted, sb.updated, sb.unchanged) == (3, 0, 0))
            #expect((sc.inserted, sc.relabelled) == (1, 1))
            #expect(store.revision == before + 1, "one transaction for the three")
            let page = try #require(try await store.page(.number(1), size: 20))
            #expect(page.items.map(\.seq) == Array((1...11).reversed()), "ranks dense and in date order")
            #expect(page.items.map(\.published) == page.items.map(\.published).sorted(by: >))
            #expect(page.items.first { $0.source == ids[2] }?.sourceTitle == "C")
        }
    }
}
