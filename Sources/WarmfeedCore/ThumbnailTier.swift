/// A place below memory where thumbnails are looked for before the origin is
/// asked: the disk tier today, a shared tier of a cluster later. The cache's
/// state machine knows tiers only by their position in a list; the service
/// that runs its actions reads and writes them through this.
public protocol ThumbnailTier: Sendable {
    /// A short name for the admin view and the logs ("disk").
    var name: String { get }
    /// The thumbnail's bytes if the tier has them (checked: never a torn or corrupt one).
    func read(_ key: ThumbnailKey) async -> [UInt8]?
    /// Keeps the thumbnail's bytes (best effort: a tier that cannot write simply misses later).
    func write(_ key: ThumbnailKey, _ bytes: [UInt8]) async
}

extension ThumbnailDiskTier: ThumbnailTier {
    /// "disk".
    public var name: String { "disk" }
}
