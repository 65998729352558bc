import Reckoning

/// A keyset position in the feed: "the items older than this one".
///
/// Following cursors costs the same on page 3 and on page 30,000 (an index seek,
/// no OFFSET), and a reader paging while new items arrive at the top sees no
/// duplicate and no skipped item, because the cursor names an item, not a count.
///
/// On the wire it is 34 URL-safe characters: a format byte, the feed's epoch, the
/// item's published time and id, and a checksum, so garbage and truncation are
/// told apart from a cursor of another feed (another epoch).
public struct Cursor: Sendable, Hashable, BitwiseCopyable {
    /// The epoch of the feed the cursor belongs to.
    public var epoch: UInt32
    /// The published time of the item, in milliseconds since 1970.
    public var published: Int64
    /// The item's id (breaks ties between items published at the same time).
    public var id: Int64

    /// Makes a cursor.
    public init(epoch: UInt32, published: Int64, id: Int64) {
        self.epoch = epoch
        self.published = published
        self.id = id
    }

    /// Why a cursor was refused.
    public enum Problem: Error, Equatable, Sendable {
        /// Not a cursor at all: bad characters, wrong length, wrong checksum.
        case malformed
        /// A well-formed cursor of another feed, or of an older cursor format.
        case otherFeed
    }

    static let format: UInt8 = 1
    static let byteCount = 25
    /// The characters a token can end with: base64 digits whose low 4 bits are 0.
    private static let canonicalLast: [UInt8] = [UInt8(ascii: "A"), UInt8(ascii: "Q"), UInt8(ascii: "g"), UInt8(ascii: "w")]

    /// The cursor's URL-safe text.
    public var token: String {
        // One array: every page renders three cursor URLs.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.byteCount)
        bytes.append(Self.format)
        func append(_ value: some FixedWidthInteger) {
            for shift in stride(from: value.bitWidth - 8, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
        }
        append(epoch)
        append(published)
        append(id)
        append(Self.checksum(bytes))
        return Self.base64URL(bytes)
    }

    private static let base64Digits = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// RFC 4648's URL-safe base64 without padding, on bytes: every page
    /// renders three cursor URLs, and Foundation's encoder with three
    /// replacements cost a quarter of a cold render.
    static func base64URL(_ bytes: [UInt8]) -> String {
        String(unsafeUninitializedCapacity: (bytes.count * 4 + 2) / 3) { out in
            var written = 0
            var index = 0
            while index < bytes.count {
                let remaining = bytes.count - index
                let group =
                    UInt32(bytes[index]) << 16
                    | (remaining > 1 ? UInt32(bytes[index + 1]) << 8 : 0)
                    | (remaining > 2 ? UInt32(bytes[index + 2]) : 0)
                for digit in 0..<min(4, remaining + 1) {
                    out[written] = base64Digits[Int(group >> (18 - 6 * UInt32(digit)) & 0x3f)]
                    written += 1
                }
                index += 3
            }
            return written
        }
    }

    /// Each byte's value as a URL-safe base64 digit, or 0xff for a byte that is not one.
    private static let base64Values: [UInt8] = {
        var values = [UInt8](repeating: 0xff, count: 256)
        for (value, digit) in base64Digits.enumerated() { values[Int(digit)] = UInt8(value) }
        return values
    }()

    /// Reads a token, checking that it belongs to the feed of `epoch`.
    ///
    /// Every page a reader scrolls to after the first is asked for with a
    /// cursor, so this decodes by hand: Foundation's decoder, behind two
    /// replacements and a padding, cost 3 to 4 µs of a cached fragment's 13.
    public static func parse(_ token: String, epoch expected: UInt32) throws(Problem) -> Cursor {
        let text = token.utf8
        // 25 bytes fill 33 characters and the top 2 bits of the 34th. The
        // decoder ignores its other 4 bits, and so would the checksum: a typo
        // there would pass, and each page would have 16 URLs.
        guard text.count == 34, let last = text.last, Self.canonicalLast.contains(last) else { throw .malformed }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(byteCount)
        var bits: UInt32 = 0
        var held: UInt32 = 0
        for character in text {
            let value = base64Values[Int(character)]
            guard value != 0xff else { throw .malformed }
            bits = bits << 6 | UInt32(value)
            held += 6
            if held >= 8 {
                held -= 8
                bytes.append(UInt8(truncatingIfNeeded: bits >> held))
            }
        }
        guard readInteger(bytes[21..<25], as: UInt32.self) == checksum(bytes[0..<21]) else { throw .malformed }
        let epoch = readInteger(bytes[1..<5], as: UInt32.self)
        guard bytes[0] == format, epoch == expected else { throw .otherFeed }
        return Cursor(
            epoch: epoch,
            published: readInteger(bytes[5..<13], as: Int64.self),
            id: readInteger(bytes[13..<21], as: Int64.self)
        )
    }

    private static func readInteger<T: FixedWidthInteger>(_ bytes: ArraySlice<UInt8>, as: T.Type) -> T {
        bytes.reduce(T.zero) { $0 << 8 | T(truncatingIfNeeded: $1) }
    }

    /// Enough to tell a typo or a cut from a real cursor.
    private static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 { FNV1a.hash32(bytes) }
}
