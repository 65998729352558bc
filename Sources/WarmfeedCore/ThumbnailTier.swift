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
/// failures (negative entries with their time to live) and hands out claims,
/// so that one node makes each thumbnail and the others wait for it.
public protocol SharedThumbnailTier: ThumbnailTier {
    /// Takes the claim on making `key`, or waits (bounded) while another node
    /// holds it, until that node's thumbnail or failure appears or its claim
    /// expires (then this node takes it over).
    func claim(_ key: ThumbnailKey) async -> SharedClaim
    /// Gives up a claim this node holds.
    func release(_ key: ThumbnailKey) async
    /// Remembers that `key` failed, for `seconds`.
    func rememberFailure(_ key: ThumbnailKey, seconds: Double) async
}

/// What asking a shared tier for a claim came to (the bytes not yet made into a response).
public enum SharedClaim: Sendable, Equatable {
    case won
    case found([UInt8])
    case failed(remaining: Double)
    case unavailable
}

extension ThumbnailDiskTier: ThumbnailTier {
    /// "disk".
    public var name: String { "disk" }

    public func read(_ key: ThumbnailKey) async -> TierRead {
        read(key).map { .hit($0) } ?? .miss
    }
}
