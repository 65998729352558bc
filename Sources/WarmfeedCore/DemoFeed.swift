/// The out-of-the-box feed: deterministic, varied items so a fresh install shows
/// a real feed at once.
///
/// Titles and summaries vary in length (one line to several), images in aspect
/// ratio (panoramas, squares, portraits), and items are spread over time with
/// irregular gaps. The same count always yields the same items.
public enum DemoFeed {
    /// The newest demo item's time: 2026-11-01T12:00:00Z.
    public static let newest: Int64 = 1_793_534_400_000

    /// `count` items, oldest first (so ids grow with time, as a real feed's would).
    /// Their images are named `demo:<n>.<ext>` until an origin is wired in.
    public static func items(count: Int) -> [FeedItem] {
        var items: [FeedItem] = []
        items.reserveCapacity(count)
        forEachItem(count: count) { items.append($0) }
        return items
    }

    /// The items of `items(count:)`, oldest first, one at a time: a feed of
    /// any size is seeded in 16 bytes an item (the 1,000,000 items made at
    /// once held ~500 MB that the allocator kept after the seed).
    ///
    /// Items are drawn newest first (each one's time steps back from the
    /// next), so a first pass notes where each item's random draws start and
    /// its time; the second makes them again from there, oldest first.
    public static func forEachItem(count: Int, _ body: (FeedItem) throws -> Void) rethrows {
        var random = SplitMix64(seed: 0x5eed_f00d)
        var time = newest
        var starts: [(state: UInt64, time: Int64)] = []
        starts.reserveCapacity(count)
        for n in stride(from: count, through: 1, by: -1) {
            starts.append((random.state, time))
            _ = item(n, at: time, using: &random)
            time = earlier(than: time, using: &random)
        }
        for (offset, start) in starts.enumerated().reversed() {
            var random = SplitMix64(seed: start.state)
            try body(item(count - offset, at: start.time, using: &random))
        }
    }

    private static func item(_ n: Int, at time: Int64, using random: inout SplitMix64) -> FeedItem {
        let (width, height) = imageSizes[Int(random.next() % UInt64(imageSizes.count))]
        let format = formats[Int(random.next() % UInt64(formats.count))]
        let titleWords = 2 + Int(random.next() % 12)
        let summaryWords = Int(random.next() % 70)
        return FeedItem(
            guid: "demo-\(n)",
            title: sentence(words: titleWords, using: &random, capitalised: true),
            summary: summaryWords == 0 ? "" : sentence(words: summaryWords, using: &random, capitalised: true) + ".",
            link: "https://example.com/demo/\(n)",
            imageURL: "demo:\(n).\(format)",
            imageWidth: width,
            imageHeight: height,
            published: time
        )
    }

    /// The time of the item before one at `time`: 30 seconds to 6 hours
    /// earlier, weighted towards short gaps.
    private static func earlier(than time: Int64, using random: inout SplitMix64) -> Int64 {
        let base: UInt64 = random.next() % 600_000
        let weight: UInt64 = 1 + random.next() % 36
        return time - Int64(30_000 + base * weight)
    }

    /// Every size a demo item's image has: panoramas, squares, portraits, all
    /// over a megapixel.
    public static let imageSizes: [(width: Int, height: Int)] = [
        (1600, 1200), (1200, 1600), (1920, 1080), (1080, 1920), (1500, 1500),
        (2400, 1000), (1000, 1400), (1800, 1200), (1280, 1024), (3000, 1000),
    ]

    private static let formats = ["jpg", "jpg", "jpg", "png", "webp"]

    private static let words = """
        amber harbour lantern quiet river meadow signal copper winter orchard falcon drift \
        ember granite hollow tide compass thistle marble cinder saffron juniper beacon \
        cobalt willow summit fable lattice mirror orbit paper quartz rally sparrow tundra \
        velvet wander yarrow zephyr atlas bramble canyon delta echo fern glacier heron \
        island jasmine kestrel lagoon mosaic nectar opal prairie quill raven sierra \
        timber umber valley walnut aurora basalt cedar dune estuary fjord grove
        """.split(separator: " ").map(String.init)

    private static func sentence(words count: Int, using random: inout SplitMix64, capitalised: Bool) -> String {
        var parts: [String] = []
        parts.reserveCapacity(count)
        for index in 0..<count {
            let word = words[Int(random.next() % UInt64(words.count))]
            parts.append(index == 0 && capitalised ? word.prefix(1).uppercased() + word.dropFirst() : word)
        }
        return parts.joined(separator: " ")
    }
}

/// A tiny deterministic random source (SplitMix64), so the demo is the same everywhere.
struct SplitMix64: RandomNumberGenerator {
    private(set) var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
