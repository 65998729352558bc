import Foundation
import HTTPTestClient
import Thumbnailer
import WarmfeedCore

/// Real images and real broken images for the origin tests.
enum OriginImages {
    static let painter = Thumbnailer(workers: 1)

    /// A 1600×1200 JPEG painted by libvips.
    static func jpeg(seed: UInt64 = 1) async throws -> [UInt8] {
        try await painter.original(width: 1600, height: 1200, seed: seed, format: .jpeg)
    }

    /// A PNG whose header declares 50,000 × 50,000 pixels, a few hundred bytes long:
    /// decoding it would need 7.5 GB.
    static func bombPNG() -> [UInt8] {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let typed = Array(type.utf8) + data
            return bigEndian(UInt32(data.count)) + typed + bigEndian(crc32(typed))
        }
        let header = bigEndian(50_000) + bigEndian(50_000) + [8, 2, 0, 0, 0]
        // A zlib stream of a few zero bytes: far too little data for the declared size.
        let idat: [UInt8] = [0x78, 0x9c, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01]
        return [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] + chunk("IHDR", header) + chunk("IDAT", idat) + chunk("IEND", [])
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xffff_ffff
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xedb8_8320 : crc >> 1 }
        }
        return ~crc
    }
}

extension ServedFeed {
    /// Adds items whose images live at `paths` on `origin`; returns their ids in order.
    func addItems(imagesAt paths: [String], on origin: FaultyOrigin) async throws -> [Int64] {
        let items = paths.enumerated().map { index, path in
            FeedItem(guid: "origin-\(path)", title: "Item \(path)", summary: "", imageURL: origin.url(path),
                     imageWidth: 1600, imageHeight: 1200, published: 1_000_000 - Int64(index))
        }
        try app.store.upsert(items)
        let top = try await app.store.page(.number(1), size: 1000)!.items
        return items.map { item in top.first { $0.guid == item.guid }!.id! }
    }
}
