import HTTPTypes

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The header names browsers send with nearly every request, each made into
/// an `HTTPField.Name` once. A request's lines are named from here, by their
/// bytes, without making a string of each name, lowercasing it and checking
/// that it is a token: that was 3% of a reader's warm page's CPU (perf,
/// pinned, bench/readers.lua's headers). A name not here is made as before.
enum KnownFieldNames {
    /// Lowercase, as the lookup compares them.
    private static let spellings: [StaticString] = [
        "host", "user-agent", "accept", "accept-encoding", "accept-language", "cookie", "connection",
        "cache-control", "pragma", "referer", "origin", "if-none-match", "if-modified-since", "range",
        "upgrade-insecure-requests", "priority", "dnt", "content-length", "content-type",
        "sec-fetch-mode", "sec-fetch-dest", "sec-fetch-site", "sec-fetch-user", "sec-ch-dpr",
        "sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform", "sec-gpc", "x-forwarded-for",
    ]
    /// The made names, at the spellings' places.
    static let names: [HTTPField.Name] = spellings.map { HTTPField.Name($0.description)! }

    /// The spellings' places by their length: a line's name is compared with those of its length only.
    private static let byLength: [[UInt8]] = {
        var table = [[UInt8]](repeating: [], count: spellings.map(\.utf8CodeUnitCount).max()! + 1)
        for index in spellings.indices { table[spellings[index].utf8CodeUnitCount].append(UInt8(index)) }
        return table
    }()

    /// The place of the `length` bytes at `key` among the spellings, ignoring ASCII case; nil when it is not one of these.
    static func index(_ key: UnsafePointer<CChar>, length: Int) -> UInt8? {
        guard length < byLength.count else { return nil }
        for index in byLength[length] where RequestHead.named(key, length, spellings[Int(index)]) { return index }
        return nil
    }

    /// The place of `name` among the spellings; nil when it is not one of these.
    /// Compared as bytes: `String`'s `==` on names past 15 bytes took its slow
    /// path, and every handler's `header(_:)` asks.
    static func index(of name: HTTPField.Name) -> UInt8? {
        var canonical = name.canonicalName
        return canonical.withUTF8 { bytes -> UInt8? in
            guard let base = bytes.baseAddress else { return nil }
            for index in spellings.indices where spellings[index].utf8CodeUnitCount == bytes.count {
                if memcmp(base, spellings[index].utf8Start, bytes.count) == 0 { return UInt8(index) }
            }
            return nil
        }
    }
}
