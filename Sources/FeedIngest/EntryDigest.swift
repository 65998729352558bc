import FeedImport
import Foundation

/// A 64-bit FNV-1a digest of everything an entry is built from, and of the
/// address its relative links are read against: two entries with the same
/// digest make the same item. A poll keeps the digests of the entries it
/// wrote, so the next poll of a feed that added three entries to forty
/// builds three (its HTML made plain, its dates read), not forty.
enum EntryDigest {
    static func of(_ raw: RawEntry, base: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        func mix(_ text: String?) {
            guard var text else { return mix(0xFF) }
            text.withUTF8 { bytes in for byte in bytes { mix(byte) } }
            mix(0xFE)  // no valid UTF-8 byte: fields cannot run into each other
        }
        func mix(_ number: UInt64?) {
            guard let number else { return mix(0xFF) }
            for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: number >> UInt64(shift))) }
            mix(0xFE)
        }
        mix(base)
        mix(raw.id)
        mix(raw.title)
        mix(raw.summary)
        mix(raw.contentHTML)
        mix(raw.link)
        mix(raw.baseURL)
        mix(raw.published)
        mix(raw.updated)
        mix(raw.publishedDate.map { $0.timeIntervalSince1970.bitPattern })
        for image in raw.images {
            mix(UInt64(image.kind.rawValue))
            mix(image.url)
            mix(image.width.map { UInt64(bitPattern: Int64($0)) })
            mix(image.height.map { UInt64(bitPattern: Int64($0)) })
            mix(image.mimeType)
        }
        return hash
    }
}
