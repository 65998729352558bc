import WarmfeedCore

/// A place below memory where thumbnails are looked for before the origin is
/// asked: the disk tier, and the shared tier of a cluster. The cache's state
/// machine knows tiers only by their position in a list; the service that
/// runs its actions reads and writes them through this.
public protocol ThumbnailTier: Sendable {
    /// A short name for the admin view and the logs ("disk", "shared").
    var name: String { get }
    /// What the tier holds for `key` (checked: never a torn or corrupt thumbnail).
    func read(_ key: ThumbnailKey) async -> TierRead
    /// Keeps the thumbnail's bytes (best effort: a tier that cannot write simply misses later).
    func write(_ key: ThumbnailKey, _ bytes: [UInt8]) async
}

/// What a tier holds for a thumbnail.
public enum TierRead: Sendable, Equatable {
    case hit([UInt8])
    case miss
    /// The origin failed for it (on another node), remembered `remaining` seconds more.
    case failed(remaining: Double)
}

/// A tier every node of a cluster shares: besides thumbnails it keeps
/// failures (negative entries with their time to live) and says who owns
/// each original, so that each original is fetched once in the cluster and
/// each thumbnail made once: the node that fetched an original (its owner)
/// keeps it and makes its other variants when other nodes ask for them.
public protocol SharedThumbnailTier: ThumbnailTier {
    /// Takes the claim on fetching the original of `picture`, or waits
    /// (bounded) while another node holds it, until that node owns the
    /// original or its failure appears, or its claim expires (then this node
    /// takes it over). An owner this node itself once was, and lost, is
    /// forgotten and the claim taken.
    func claimOriginal(_ picture: Picture) async -> OriginalClaim
    /// This node fetched the original of `picture` and keeps it: it is the one
    /// the others ask for its variants; the claim is let go.
    func ownOriginal(_ picture: Picture) async
    /// The fetch of `picture`'s original failed: the others are told so for
    /// `seconds`, and the claim is let go.
    func originalFailed(_ picture: Picture, seconds: Double) async
    /// Lets go of the claim on `picture`'s original with nothing to share (the origin was busy).
    func releaseOriginal(_ picture: Picture) async
    /// The owner at `url` did not answer for `picture`: forgets it, if it is still the one named.
    func forgetOwner(_ picture: Picture, url: String) async
    /// Remembers that `key` failed, for `seconds`.
    func rememberFailure(_ key: ThumbnailKey, seconds: Double) async
}

/// What asking a shared tier for the claim on an original came to.
public enum OriginalClaim: Sendable, Equatable {
    /// This node holds the claim: it fetches the original (and then owns it).
    case won
    /// The node at this address owns the original: ask it for the variant.
    case owner(String)
    /// The origin failed for it (on another node), remembered `remaining` seconds more.
    case failed(remaining: Double)
    /// The shared tier could not be asked (or the wait ran out): this node
    /// fetches the original itself, as it would without a shared tier.
    case unavailable
}

extension ThumbnailDiskTier: ThumbnailTier {
    /// "disk".
    public var name: String { "disk" }

    public func read(_ key: ThumbnailKey) async -> TierRead {
        read(key).map { .hit($0) } ?? .miss
    }
}
