import Foundation
import Logging
import PageFiles
import Testing

@testable import FeedPages
@testable import PostgresStore
@testable import SQLiteStore
@testable import WarmfeedCore

/// A prepared row whose stored bytes went bad (issue 34): a flipped byte, a
/// row cut short. On every backend, the page is still the page its items
/// make (the row rendered from its item), the row is named corrupt, and the
/// next pass of `RowPreparation` prepares it again.
@Suite(.serialized) struct CorruptRowsTests {
    /// How a row is spoilt where the store keeps it.
    enum Damage: CaseIterable, CustomTestStringConvertible {
        /// A byte of the row's HTML flipped.
        case flippedInTheRow
        /// A byte of the row's check flipped.
        case flippedInTheCheck
        /// The row cut to its tag and half its check.
        case cutToItsTag
        /// The row cut in the middle of its HTML.
        case cutInTheRow

        var testDescription: String { "\(self)" }
    }

    static let size = 10

    @Test(arguments: Backend.available, Damage.allCases)
    func aCorruptRowIsServedFromItsItemAndPreparedAgain(_ backend: Backend, _ damage: Damage) async throws {
        try await TestStore.with(backend) { made in
            let store = made.store
            try store.upsert(DemoFeed.items(count: 40))
            let renderer = try await PreparedRowsTests.renderer()
            let tag = try #require(renderer.rowTag)
            let pages = PageService(store: store, renderer: renderer, cache: PageCache(capacityBytes: 1 << 20), pageSize: Self.size)
            let preparation = RowPreparation(store: store, renderer: renderer, pageSize: Self.size, repairs: pages.repairs, logger: testLogger)
            try await preparation.catchUp()
            #expect(preparation.status.prepared == 40)

            // Item 25 sits on page 2 (ids 30…21), not its first row.
            let victim: Int64 = 25
            try await Self.spoil(victim, damage, in: made)
            let page = try #require(try await store.preparedPage(.number(2), size: Self.size, tag: tag))
            #expect(page.corrupt == [victim])
            let row = try #require(page.rows.first { $0.id == victim })
            #expect(row.prepared.isEmpty && page.item(of: row)?.id == victim, "the corrupt row comes as its item")
            #expect(page.rows.filter { $0.id != victim }.allSatisfy { !$0.prepared.isEmpty && $0.itemIndex == nil })

            // Served through the page service: the page its items make, and the row noted.
            let key = PageCache.Key(revision: store.revision, kind: .fragment, query: PageQuery(request: .number(2), number: 2))
            let served = try #require(try await pages.render(key))
            let items = try #require(try await store.page(.number(2), size: Self.size))
            let expected = renderer.fragment(of: items, query: key.query, number: 2)
            let bytes = served.html.withUnsafeBytes { Array($0) }
            #expect(bytes == expected, "not the page its items make: \(PreparedRowsTests.difference(bytes, expected))")
            let title = try #require(items.items.first { $0.id == victim }?.title)
            #expect(String(decoding: expected, as: UTF8.self).contains(title))

            // The next pass prepares it again; the row is served from its bytes once more.
            try await preparation.catchUp()
            #expect(preparation.status.repaired == 1)
            #expect(preparation.status.prepared == 41)
            let repaired = try #require(try await store.preparedPage(.number(2), size: Self.size, tag: tag))
            #expect(repaired.corrupt.isEmpty)
            #expect(repaired.rows.first { $0.id == victim }.map { !$0.prepared.isEmpty && $0.itemIndex == nil } == true)
            #expect(try await PreparedRowsTests.compare(store, renderer, size: Self.size).differences == [])
        }
    }

    /// Spoils item `id`'s stored row as `damage` says, where `made` keeps it.
    static func spoil(_ id: Int64, _ damage: Damage, in made: TestStore) async throws {
        // Offsets in the stored row: the tag (0–3), the check (4–7), the HTML (8…).
        switch made.backend {
        case .sqlite:
            let file = made.address + "-rows"
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
            let record = try #require(Self.record(of: id, in: bytes))
            let row = record.lowerBound + RowLog.headerSize
            switch damage {
            case .flippedInTheRow: bytes[row + 40] ^= 0x01
            case .flippedInTheCheck: bytes[row + 6] ^= 0x80
            case .cutToItsTag, .cutInTheRow:
                // The record says it is shorter; the rest of it stays in the file.
                let length = damage == .cutToItsTag ? 6 : (record.count - RowLog.headerSize) / 2
                withUnsafeBytes(of: UInt32(length).littleEndian) { bytes.replaceSubrange(record.lowerBound + 8..<record.lowerBound + 12, with: $0) }
            }
            try Data(bytes).write(to: URL(fileURLWithPath: file))
        case .postgres:
            let sql =
                switch damage {
                case .flippedInTheRow: "UPDATE item SET prepared = set_byte(prepared, 48, get_byte(prepared, 48) # 1) WHERE id = \(id)"
                case .flippedInTheCheck: "UPDATE item SET prepared = set_byte(prepared, 6, get_byte(prepared, 6) # 128) WHERE id = \(id)"
                case .cutToItsTag: "UPDATE item SET prepared = substring(prepared from 1 for 6) WHERE id = \(id)"
                case .cutInTheRow: "UPDATE item SET prepared = substring(prepared from 1 for length(prepared) / 2) WHERE id = \(id)"
                }
            try withStoreConnection(try PostgresLocation(made.address)) { connection in _ = try connection.run(sql) }
        }
    }

    /// Where item `id`'s latest record sits in a SQLite row file (records back to back: id, length, flags, row).
    static func record(of id: Int64, in file: [UInt8]) -> Range<Int>? {
        var at = 0
        var found: Range<Int>?
        while at + RowLog.headerSize <= file.count {
            let recordID = file[at..<at + 8].withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(as: Int64.self)) }
            let length = file[at + 8..<at + 12].withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self))) }
            let end = at + RowLog.headerSize + length
            if recordID == id { found = at..<end }
            at = end
        }
        return found
    }
}
