import Reckoning

/// This process's part of the polling, among the processes that share a
/// store. Each live process holds a place (a small number); the sources of a
/// host are polled by one of them, the place with the highest weight for that
/// host (rendezvous hashing, as groupcache's peers pick an owner). So a
/// host's limits, its `Retry-After` and its backoff are kept in one place,
/// every host is polled by exactly one process, and a process that comes or
/// goes moves only the hosts it takes or held.
///
/// The weights are a fixed function of the host's name and the place, the
/// same in every process and every build (not Swift's seeded `Hasher`).
public struct PollingShare: Sendable, Equatable, CustomStringConvertible {
    /// This process's place.
    public let place: Int
    /// Every live process's place, this one's included, ascending.
    public let places: [Int]

    /// `place` among `places` (which gains `place` if it lacks it).
    public init(place: Int, places: [Int]) {
        self.place = place
        self.places = Array(Set(places).union([place])).sorted()
    }

    /// A process alone with its store: it polls every host and reads the lists.
    public static let whole = PollingShare(place: 0, places: [0])

    /// Whether this process reads the source lists and writes what they
    /// change in the store: the first live place, so exactly one does.
    public var readsLists: Bool { places.first == place }

    /// Whether this process polls the sources on `host`.
    public func polls(host: String) -> Bool {
        places.count == 1 || Self.owner(of: host, among: places) == place
    }

    /// The place, of `places`, that polls `host`.
    public static func owner(of host: String, among places: [Int]) -> Int? {
        let key = FNV1a.hash64(host.utf8)
        return places.max { a, b in (weight(key, a), a) < (weight(key, b), b) }
    }

    public var description: String { "place \(place) of \(places)" }

    /// The weight of `place` for a host whose name hashes to `key`.
    static func weight(_ key: UInt64, _ place: Int) -> UInt64 {
        mix(key ^ mix(UInt64(truncatingIfNeeded: place) &+ 0x9E37_79B9_7F4A_7C15))
    }

    /// SplitMix64's finalizer: every bit of the input moves every bit of the output.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
