import Testing

@testable import SQLiteStore
@testable import WarmfeedCore

/// A write makes `revision` move once, whoever made it: this process's own
/// write at once, another process's (`warmfeed import` on the data folder)
/// when `noticeOtherWriters` reads the store's count of writes.
@Suite struct OtherWritersTests {
    @Test func anOwnWriteMovesTheRevisionOnceAndAnotherWritersWriteIsNoticed() throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        store.noticeOtherWriters()
        let start = store.revision
        try store.upsert([item(1, published: 100)])
        #expect(store.revision == start + 1, "the write itself")
        store.noticeOtherWriters()
        store.noticeOtherWriters()
        #expect(store.revision == start + 1, "not once more, taken for another writer's")

        // Another store on the same file stands for another process.
        let other = try temporary.reopen()
        try other.upsert([item(2, published: 200)])
        #expect(store.revision == start + 1)
        store.noticeOtherWriters()
        #expect(store.revision == start + 2, "the other process's write is noticed")
        store.noticeOtherWriters()
        #expect(store.revision == start + 2)

        // A write before the first look is this process's too.
        let fresh = try temporary.reopen()
        let before = fresh.revision
        try fresh.upsert([item(3, published: 300)])
        fresh.noticeOtherWriters()
        #expect(fresh.revision == before + 1)
    }
}
