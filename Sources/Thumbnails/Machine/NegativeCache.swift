import ImageFormats
import WarmfeedCore

/// The failures the thumbnail cache remembers, so a failing origin is not
/// asked again for every reader: until when each thumbnail is answered with
/// the placeholder, and how many times in a row it failed. A first failure is
/// remembered `first` seconds, each one in a row twice as long, never longer
/// than `longest`; an entry outlives its time (so the next failure is
/// remembered longer) until it has been quiet for `longest` more. At most
/// `capacity` are kept: past it the expired go, then the one ending soonest.
///
/// A pure value, part of `ThumbnailCacheState` and under its lock.
struct NegativeCache {
    struct Entry {
        var until: Double
        var streak: Int
    }

    private var entries: [ThumbnailKey: Entry] = [:]
    /// How long a first failure is remembered, in seconds.
    let first: Double
    /// The longest a failure is remembered, in seconds.
    let longest: Double
    /// The most failures remembered at once.
    let capacity: Int

    init(first: Double, longest: Double, capacity: Int) {
        self.first = min(first, longest)
        self.longest = longest
        self.capacity = capacity
    }

    /// How many failures are remembered, expired or not.
    var count: Int { entries.count }

    /// Whether `key` is answered with the placeholder at `now`.
    func isFailing(_ key: ThumbnailKey, now: Double) -> Bool {
        entries[key].map { $0.until > now } ?? false
    }

    /// How long another variant of `key`'s item is still remembered as failed
    /// from `now`, the longest of them, when one is: every variant is made
    /// from the one original, so what failed for one (the origin, or an
    /// original that is no image) would fail for the others.
    func siblingRemaining(of key: ThumbnailKey, now: Double) -> Double? {
        var longest: Double?
        for format in ImageFormat.allCases {
            for scale in ThumbnailVariant.scales where format != key.variant.format || scale != key.variant.scale {
                let sibling = ThumbnailKey(picture: key.picture, variant: ThumbnailVariant(scale: scale, format: format))
                if let remaining = remaining(sibling, now: now) { longest = max(longest ?? 0, remaining) }
            }
        }
        return longest
    }

    /// How long `key` is still remembered as failed from `now`, when it is.
    func remaining(_ key: ThumbnailKey, now: Double) -> Double? {
        guard let until = entries[key]?.until, until > now else { return nil }
        return until - now
    }

    /// The seconds `key`'s next failure would be remembered.
    func nextTTL(_ key: ThumbnailKey) -> Double {
        let streak = (entries[key]?.streak ?? 0) + 1
        return min(longest, first * Double(1 << min(streak - 1, 30)))
    }

    /// `key` failed at `now`: remembered for its streak's time (returned), making room first when full.
    mutating func failed(_ key: ThumbnailKey, now: Double) -> Double {
        if entries[key] == nil, entries.count >= capacity { purgeExpired(now: now) }
        if entries[key] == nil, entries.count >= capacity, let victim = entries.min(by: { $0.value.until < $1.value.until })?.key {
            entries[victim] = nil
        }
        let ttl = nextTTL(key)
        entries[key] = Entry(until: now + ttl, streak: (entries[key]?.streak ?? 0) + 1)
        return ttl
    }

    /// Another node remembers `key` as failed for `seconds` more: so does this one, keeping its streak.
    mutating func remember(_ key: ThumbnailKey, for seconds: Double, now: Double) {
        entries[key] = Entry(until: now + seconds, streak: entries[key]?.streak ?? 1)
    }

    /// `key` was made: its failures are forgotten.
    mutating func forget(_ key: ThumbnailKey) {
        entries[key] = nil
    }

    /// Drops failures whose time is up and that have been quiet since for `longest`.
    mutating func purgeExpired(now: Double) {
        entries = entries.filter { $0.value.until + longest > now }
    }
}
