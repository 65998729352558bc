import Foundation
import Testing
@testable import WarmfeedCore

/// One suite, every backend: what a caller of `FeedStore` may rely on,
/// whichever store answers. Serialized: the large writes hold a core each.
@Suite(.serialized) struct FeedStoreConformanceTests {
    @Test(arguments: Backend.available)
    func keysetPagingVisitsEveryItemOnceInOrder(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let store = made.store
            try await upsert(store, DemoFeed.items(count: 100_000))
            #expect(try await store.count() == 100_000)
            var seen = Set<String>()
            var expectedPosition = 1
            var previous: (Int64, Int64)?
            var request = PageRequest.number(1)
            var pages = 0
            var problems = 0
            while true {
                let page = try #require(try await store.page(request, size: 30))
                pages += 1
                if page.firstPosition != expectedPosition || page.total != 100_000 { problems += 1 }
                for item in page.items {
                    if !seen.insert(item.guid).inserted { problems += 1 }
                    if let previous, !((item.published, item.id!) < previous) { problems += 1 }
                    previous = (item.published, item.id!)
                }
                expectedPosition += page.items.count
                guard let older = page.older else { break }
                request = .after(older)
            }
            #expect(problems == 0)
            #expect(seen.count == 100_000)
            #expect(pages == 3334)
        }
    }

    @Test(arguments: Backend.available)
    func aMillionItemsPageByNumberAndByCursorAlike(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let store = made.store
            _ = try await store.writeOffPool { writer in
                try DemoFeed.forEachItem(count: 1_000_000) { try writer.upsert($0) }
            }
            #expect(try await store.count() == 1_000_000)
            let last = try #require(try await store.page(.number(33_334), size: 30))
            #expect(last.items.count == 10)
            #expect(last.older == nil)
            #expect(last.items.last?.seq == 1)
            #expect(try await store.page(.number(33_335), size: 30) == nil)
            let deep = try #require(try await store.page(.number(20_000), size: 30))
            #expect(deep.firstPosition == 19_999 * 30 + 1)
            let next = try #require(try await store.page(.after(deep.older!), size: 30))
            let byNumber = try #require(try await store.page(.number(20_001), size: 30))
            #expect(next.items.map(\.guid) == byNumber.items.map(\.guid))
            let back = try #require(try await store.page(.before(next.newer!), size: 30))
            #expect(back.items.map(\.guid) == deep.items.map(\.guid))
        }
    }

    @Test(arguments: Backend.available)
    func deepLinksAgreeWithCursors(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let store = made.store
            try await upsert(store, DemoFeed.items(count: 100_000))
            // Page 30,000 at 3 items a page: the rank arithmetic must land exactly.
            let deep = try #require(try await store.page(.number(30_000), size: 3))
            #expect(deep.firstPosition == 29_999 * 3 + 1)
            let next = try #require(try await store.page(.after(deep.older!), size: 3))
            #expect(next.firstPosition == 30_000 * 3 + 1)
            let byNumber = try #require(try await store.page(.number(30_001), size: 3))
            #expect(byNumber.items.map(\.guid) == next.items.map(\.guid))
            let back = try #require(try await store.page(.before(next.newer!), size: 3))
            #expect(back.items.map(\.guid) == deep.items.map(\.guid))
            #expect(try await store.page(.number(33_335), size: 3) == nil)
            #expect(try await store.page(.number(33_334), size: 3)?.items.count == 1)
            #expect(try await store.page(.number(0), size: 3) == nil)
        }
    }

    @Test(arguments: Backend.available)
    func insertsAtTheTopWhilePagingNeitherRepeatNorSkip(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let store = made.store
            try await upsert(store, (1...100).map { item($0, published: Int64($0) * 1000) })
            let first = try #require(try await store.page(.number(1), size: 10))
            #expect(first.items.first?.guid == "g100")
            #expect(first.items.last?.guid == "g91")
            let revision = store.revision
            try await upsert(store, (101...125).map { item($0, published: Int64($0) * 1000) })
            #expect(store.revision > revision)
            let second = try #require(try await store.page(.after(first.older!), size: 10))
            #expect(second.items.map(\.guid) == (81...90).reversed().map { "g\($0)" })
            #expect(second.firstPosition == 25 + 11)
            #expect(second.total == 125)
            let newer = try #require(try await store.page(.before(second.newer!), size: 10))
            #expect(newer.items.map(\.guid) == first.items.map(\.guid))
            #expect(newer.newer != nil)
        }
    }

    @Test(arguments: Backend.available)
    func ranksStayDenseWhenItemsLandInTheMiddleOrAtTheBottom(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let store = made.store
            try await upsert(store, (1...50).map { item($0 * 2, published: Int64($0) * 2000) })
            try await upsert(store, [item(51, published: 51_000), item(0, published: -5), item(77, published: 77_000)])
            var moved = item(10, published: 999_999)
            moved.title = "moved"
            #expect(try await upsert(store, [moved]).updated == 1)
            let everything = try #require(try await store.page(.number(1), size: 1000))
            #expect(everything.total == 53)
            #expect(everything.items.first?.guid == "g10")
            #expect(everything.items.last?.guid == "g0")
            #expect(everything.items.map(\.seq) == (1...53).reversed().map { Int64($0) })
            let page3 = try #require(try await store.page(.number(3), size: 10))
            #expect(page3.items.map(\.guid) == Array(everything.items[20..<30]).map(\.guid))
        }
    }

    @Test(arguments: Backend.available)
    func upsertIsIdempotentAndUpdatesInPlace(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let store = made.store
            let items = (1...20).map { item($0, published: Int64($0)) }
            #expect(try await upsert(store, items).inserted == 20)
            let revision = store.revision
            let again = try await upsert(store, items)
            #expect(again.unchanged == 20 && again.inserted == 0 && again.updated == 0)
            #expect(store.revision == revision, "an import that changes nothing must not invalidate rendered pages")
            var edited = items[4]
            edited.title = "Edited"
            edited.link = "https://example.org/5"
            #expect(try await upsert(store, [edited]).updated == 1)
            let page = try #require(try await store.page(.number(2), size: 10))
            #expect(page.items.contains { $0.guid == "g5" && $0.title == "Edited" && $0.link == "https://example.org/5" })
            #expect(try await store.count() == 20)
            let id = try #require(page.items.first { $0.guid == "g5" }?.id)
            #expect(try await store.item(id: id)?.title == "Edited")
            #expect(try await store.item(id: 999_999) == nil)
        }
    }

    @Test(arguments: Backend.available)
    func everyFieldComesBackAsWritten(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let full = FeedItem(
                guid: "full", title: "Tïtle <b>&amp;</b> 🙂", summary: String(repeating: "long ", count: 2000), link: "https://example.org/a?b=c",
                imageURL: "https://img.example.org/x.jpg", imageWidth: 1600, imageHeight: 900, published: -62_000_000_000_000
            )
            let bare = FeedItem(guid: "bare", title: "", summary: "", published: 1_700_000_000_000)
            try await upsert(made.store, [full, bare])
            let items = try #require(try await made.store.page(.number(1), size: 10)).items
            #expect(items.count == 2)
            var expected = [bare, full]
            for index in expected.indices {
                expected[index].id = items[index].id
                expected[index].seq = Int64(2 - index)
            }
            #expect(items == expected)
        }
    }

    @Test(arguments: Backend.available)
    func anEmptyFeedHasAnEmptyFirstPageAndNoSecond(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let store = made.store
            #expect(try await store.count() == 0)
            let page = try #require(try await store.page(.number(1), size: 30))
            #expect(page.items.isEmpty)
            #expect(page.older == nil && page.newer == nil)
            #expect(try await store.page(.number(2), size: 30) == nil)
            let stray = Cursor(epoch: store.epoch, published: 0, id: 0)
            #expect(try await store.page(.after(stray), size: 30) == nil)
        }
    }

    @Test(arguments: Backend.available)
    func aCursorMadeOnOneOpeningIsValidOnAnother(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            try await upsert(made.store, (1...100).map { item($0, published: Int64($0)) })
            let first = try #require(try await made.store.page(.number(1), size: 10))
            let token = try #require(first.older).token
            let other = try await made.another()
            #expect(other.epoch == made.store.epoch)
            let cursor = try Cursor.parse(token, epoch: other.epoch)
            let second = try #require(try await other.page(.after(cursor), size: 10))
            #expect(second.items.map(\.guid) == (81...90).reversed().map { "g\($0)" })
            #expect(try await other.count() == 100)
            await other.close()
        }
    }

    struct Interrupted: Error {}

    @Test(arguments: Backend.available)
    func aWriteThatThrowsLeavesNothingBehind(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let store = made.store
            try await upsert(store, [item(1, published: 1), item(2, published: 2)])
            let revision = store.revision
            await #expect(throws: Interrupted.self) {
                try await store.writeOffPool { writer in
                    // Past one batch, so some rows reached the server before the failure.
                    for n in 3...1200 { try writer.upsert(item(n, published: Int64(n))) }
                    var changed = item(1, published: 1)
                    changed.title = "changed"
                    try writer.upsert(changed)
                    throw Interrupted()
                }
            }
            #expect(try await store.count() == 2)
            #expect(try await store.page(.number(1), size: 10)?.items.map(\.title) == ["Item 2", "Item 1"])
            #expect(store.revision == revision)
        }
    }

    @Test(arguments: Backend.available)
    func repeatedGuidsInOneWriteAreCountedOnceAndTheLaterWins(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let (_, summary) = try await made.store.writeOffPool { writer in
                try writer.upsert(FeedItem(guid: "x", title: "first", summary: "", published: 5))
                try writer.upsert(FeedItem(guid: "x", title: "second", summary: "", published: 5))
                try writer.upsert(FeedItem(guid: "y", title: "t", summary: "", published: 6))
            }
            #expect(summary.inserted == 2)
            #expect(summary.repeated == 1)
            #expect(summary.updated == 0)
            #expect(try await made.store.page(.number(1), size: 10)?.items.map(\.title) == ["t", "second"])
        }
    }

    @Test(arguments: Backend.available)
    func keepingTheStoredDateLeavesAnUndatedItemInPlace(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let store = made.store
            try await upsert(store, [FeedItem(guid: "old", title: "t", summary: "", published: 100), FeedItem(guid: "mid", title: "t", summary: "", published: 200)])
            let (_, summary) = try await store.writeOffPool { writer in
                try writer.upsert(FeedItem(guid: "old", title: "t", summary: "", published: 999), keepStoredDate: true)
                try writer.upsert(FeedItem(guid: "new", title: "t", summary: "", published: 999), keepStoredDate: true)
            }
            #expect(summary.unchanged == 1)
            #expect(summary.inserted == 1)
            let page = try #require(try await store.page(.number(1), size: 10))
            #expect(page.items.map(\.guid) == ["new", "mid", "old"])
            #expect(page.items.map(\.seq) == [3, 2, 1])
        }
    }

    @Test(arguments: Backend.available)
    func notesKeepTheSourcesValidators(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let store = made.store
            #expect(try await store.note("validators x") == nil)
            try await store.setNote("validators x", "\"etag\"\nMon, 01 Jan 2024 00:00:00 GMT")
            try await store.setNote("validators x", "\"etag2\"\n")
            let other = try await made.another()
            #expect(try await other.note("validators x") == "\"etag2\"\n")
            try await store.setNote("validators x", nil)
            #expect(try await other.note("validators x") == nil)
            await other.close()
        }
    }

    @Test(arguments: Backend.available)
    func previewsStayWhileThePictureDoesAndMoveNoRevision(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let store = made.store
            var pictured = FeedItem(guid: "p", title: "t", summary: "", imageURL: "https://img/1.jpg", published: 1)
            try await upsert(store, [pictured, item(2, published: 2)])
            let id = try #require(try await store.page(.number(1), size: 10)?.items.first { $0.guid == "p" }?.id)
            let revision = store.revision
            try await store.setPreviews([id: 0x112233_445566])
            #expect(store.revision == revision)
            #expect(try await store.item(id: id)?.preview == 0x112233_445566)
            pictured.title = "retitled"
            try await upsert(store, [pictured])
            #expect(try await store.item(id: id)?.preview == 0x112233_445566, "an edit that keeps the picture keeps its preview")
            pictured.imageURL = "https://img/2.jpg"
            try await upsert(store, [pictured])
            #expect(try await store.item(id: id)?.preview == nil, "a new picture has no preview yet")
        }
    }

    @Test(arguments: Backend.available)
    func anotherOpeningHearsOfAWriteAndMovesItsRevision(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let listener = try await made.another()
            let running = Task { await listener.run() }
            // The listener is up once it has read the count (PostgreSQL) or looked once (SQLite).
            try await Task.sleep(for: .milliseconds(300))
            let before = listener.revision
            try await upsert(made.store, [item(1, published: 1)])
            var waited = 0
            while listener.revision == before, waited < 100 {
                try await Task.sleep(for: .milliseconds(100))
                waited += 1
            }
            #expect(listener.revision != before, "the other opening never heard of the write")
            running.cancel()
            await running.value
            await listener.close()
        }
    }

    @Test(arguments: Backend.available)
    func twoWritesAtOnceFromTwoOpeningsBothLandWithoutDuplicates(_ backend: Backend) async throws {
        try await TestStore.with(backend) { made in
            let other = try await made.another()
            // The same 3,000 guids from both sides, and 1,000 of each side's own.
            let shared = (1...3000).map { item($0, published: Int64($0)) }
            async let a = upsert(made.store, shared + (10_001...11_000).map { item($0, published: Int64($0)) })
            async let b = upsert(other, shared + (20_001...21_000).map { item($0, published: Int64($0)) })
            let (first, second) = try await (a, b)
            #expect(first.inserted + second.inserted == 5000)
            #expect(try await made.store.count() == 5000)
            let all = try #require(try await made.store.page(.number(1), size: 6000))
            #expect(Set(all.items.map(\.guid)).count == 5000)
            #expect(all.items.map(\.seq) == (1...5000).reversed().map { Int64($0) })
            await other.close()
        }
    }
}
