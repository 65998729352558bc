import Foundation
import Testing

@testable import Thumbnails
@testable import WarmfeedCore

@Suite struct ThumbnailDiskTierTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-disk-\(UUID().uuidString)")
    func key(_ id: Int64, _ scale: Int = 1) -> ThumbnailKey {
        ThumbnailKey(itemID: id, variant: ThumbnailVariant(scale: scale, format: .webp))
    }

    @Test func survivesAReopenAndDetectsCorruption() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let tier = try ThumbnailDiskTier(folder: folder, budget: 1 << 20)
        tier.write(key(1), Array("first".utf8))
        tier.write(key(2, 2), Array(repeating: 7, count: 1000))
        #expect(tier.read(key(1)) == Array("first".utf8))

        let reopened = try ThumbnailDiskTier(folder: folder, budget: 1 << 20)
        #expect(reopened.usage.entries == 2)
        #expect(reopened.read(key(2, 2)) == Array(repeating: 7, count: 1000))

        // Flip one byte of the body: the file is refused and removed, never served.
        let url = folder.appendingPathComponent(ThumbnailDiskTier.fileName(of: key(2, 2)))
        var data = try Data(contentsOf: url)
        data[data.count - 10] ^= 0xff
        try data.write(to: url)
        #expect(reopened.read(key(2, 2)) == nil)
        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(reopened.usage.corrupt == 1)

        // A header that says a length the file does not have (a gigabyte): refused, nothing that size read or made.
        reopened.write(key(3), Array("third".utf8))
        let third = folder.appendingPathComponent(ThumbnailDiskTier.fileName(of: key(3)))
        var lying = try Data(contentsOf: third)
        lying.replaceSubrange(4..<12, with: withUnsafeBytes(of: UInt64(1 << 30).littleEndian) { Array($0) })
        try lying.write(to: third)
        #expect(reopened.read(key(3)) == nil)
        #expect(reopened.usage.corrupt == 2)

        // A truncated file too.
        let first = folder.appendingPathComponent(ThumbnailDiskTier.fileName(of: key(1)))
        try Data(try Data(contentsOf: first).prefix(12)).write(to: first)
        #expect(reopened.read(key(1)) == nil)
        #expect(reopened.usage.entries == 0)
    }

    /// A file the first version wrote (magic `WFT1`, an FNV-1a sum) in a data
    /// folder used before: a miss and gone, not a corrupt file, and its key
    /// is written afresh.
    @Test func aFileOfTheFirstVersionIsAMissNotACorruption() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let tier = try ThumbnailDiskTier(folder: folder, budget: 1 << 20)
        tier.write(key(1), Array("picture".utf8))
        let url = folder.appendingPathComponent(ThumbnailDiskTier.fileName(of: key(1)))
        var data = try Data(contentsOf: url)
        data.replaceSubrange(0..<4, with: Array("WFT1".utf8))
        try data.write(to: url)
        let reopened = try ThumbnailDiskTier(folder: folder, budget: 1 << 20)
        #expect(reopened.read(key(1)) == nil)
        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(reopened.usage.corrupt == 0)
        reopened.write(key(1), Array("again".utf8))
        #expect(reopened.read(key(1)) == Array("again".utf8))
    }

    @Test func staysWithinItsBudget() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let tier = try ThumbnailDiskTier(folder: folder, budget: 3000)
        for id in 1...10 { tier.write(key(Int64(id)), Array(repeating: UInt8(id), count: 900)) }
        #expect(tier.usage.bytes <= 3000)
        #expect(tier.read(key(10)) != nil)
        #expect(tier.read(key(1)) == nil)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(files.count == tier.usage.entries)
        // A smaller budget on restart trims the oldest files.
        let smaller = try ThumbnailDiskTier(folder: folder, budget: 1000)
        #expect(smaller.usage.entries == 1)
    }

    @Test func theIndexBudgetBoundsTheFilesKept() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        // Memory for a few dozen entries, disk for many more: the index decides.
        let tier = try ThumbnailDiskTier(folder: folder, budget: 1 << 20, indexBudget: 2_000)
        let most = tier.usage.maxEntries
        #expect((8...100).contains(most))
        for id in 1...(most + 20) { tier.write(key(Int64(id)), Array(repeating: 1, count: 100)) }
        #expect(tier.usage.entries == most)
        #expect(tier.usage.indexBytes <= tier.usage.indexBudget + 5 * 64)
        // The least recently used files went from the disk too, not only from the index.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).count == most)
        #expect(tier.read(key(1)) == nil)
        #expect(tier.read(key(Int64(most + 20))) != nil)
        // Reopened with the same budget over the same files: the same ones stay.
        let reopened = try ThumbnailDiskTier(folder: folder, budget: 1 << 20, indexBudget: 2_000)
        #expect(reopened.usage.entries == most)
        // An id the index cannot pack is not written at all, rather than written and forgotten.
        tier.write(ThumbnailKey(itemID: -5, variant: ThumbnailVariant(scale: 1, format: .webp)), [1, 2, 3])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).count == most)
    }

    @Test func fileNamesRoundTripAndStrangersAreIgnored() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        for candidate in [key(5), key(99, 2), ThumbnailKey(itemID: 3, variant: ThumbnailVariant(scale: 1, format: .jpeg))] {
            #expect(ThumbnailDiskTier.key(fromFileName: ThumbnailDiskTier.fileName(of: candidate)) == candidate)
        }
        for stranger in ["notes.txt", "1-3x.webp", "x-1x.webp", "1-1x.gif", ".tmp-abc"] {
            #expect(ThumbnailDiskTier.key(fromFileName: stranger) == nil)
        }
    }
}
