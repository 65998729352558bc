import CoreMetrics
import Foundation
import Logging
import OriginFetcher
import Thumbnailer
import WarmfeedCore

/// What the thumbnails can be told, each with its one default: the memory,
/// disk and decode budgets, how long a failure is remembered, and how long a
/// reader waits. `warmfeed serve`'s options set it (`WarmfeedConfiguration.thumbnails`).
public struct ThumbnailsConfiguration: Sendable {
    /// Memory for thumbnails, in bytes.
    public var memoryBytes = 256 << 20
    /// Memory for originals kept after a resize, so the item's other size needs
    /// no second fetch, and for those waiting for libvips, in bytes.
    public var originalsBytes = ThumbnailBudgets.originals
    /// Memory libvips may hold at once to decode pictures, in bytes: each
    /// decode's share is estimated from the picture's header before any pixel
    /// is decoded; decodes wait until theirs fits, and a picture that needs
    /// more than all of it is refused (its placeholder is served). Shared by
    /// the whole process (`Thumbnailer.shared.decodeBudget`).
    public var decodeBytes = DecodeBudget.defaultBytes
    /// Disk for thumbnails (`thumbs` in the data folder), in bytes.
    public var diskBytes = 1024 << 20
    /// Disk for originals kept after their fetch (`originals` in the data
    /// folder), so an item's later sizes and formats need no second fetch, in
    /// bytes (0: none kept).
    public var originalsDiskBytes = 1024 << 20
    /// Memory for the index of the thumbnails on disk, in bytes: about 40
    /// bytes a thumbnail, so the default (16 MiB) holds 393,216.
    public var diskIndexBytes = ThumbnailDiskTier.defaultIndexBudget
    /// The longest an origin failure is remembered before the origin is asked again.
    public var negativeTTL: Duration = .seconds(30)
    /// How long a first failure is remembered; each failure in a row doubles it, up to `negativeTTL`.
    public var firstNegativeTTL: Duration = .seconds(5)
    /// The longest a thumbnail request waits (for the origin, a resize): then
    /// the box is answered empty (the row's preview shows) and the job goes on
    /// for the next reader.
    public var answerWithin = ThumbnailService.defaultAnswerWithin

    /// The defaults.
    public init() {}
}

extension ThumbnailService {
    /// The thumbnails as `configuration` says: in memory, then `shared` (a
    /// cluster's tier: a hit there is a hit made by any node), then on disk
    /// in `dataFolder/thumbs`, with originals kept in `dataFolder/originals`;
    /// the process's decode budget set (servers sharing a process, the tests,
    /// share it: the last one's setting applies).
    package convenience init(
        _ configuration: ThumbnailsConfiguration, dataFolder: URL, store: any FeedStore, shared: (any ThumbnailTier)?, fetcher: OriginFetcher,
        origin: ImageSource, limits: FetchLimits, clock: Uptime, metrics: any MetricsFactory, previews: PreviewKeeper,
        prewarmMakesMissedAVIF: Bool, nodeName: String, logger: Logger
    ) throws {
        Thumbnailer.shared.decodeBudget.setBytes(configuration.decodeBytes)
        let disk = try ThumbnailDiskTier(
            folder: dataFolder.appendingPathComponent("thumbs"), budget: configuration.diskBytes, indexBudget: configuration.diskIndexBytes)
        self.init(
            store: store, memoryBudget: configuration.memoryBytes, originalsBudget: configuration.originalsBytes,
            negativeTTL: (Uptime.seconds(configuration.firstNegativeTTL), Uptime.seconds(configuration.negativeTTL)),
            tiers: (shared.map { [$0] } ?? []) + [disk], fetcher: fetcher, thumbnailer: Thumbnailer.shared, origin: origin, limits: limits,
            clock: clock, metrics: metrics, previews: previews,
            originalStore: configuration.originalsDiskBytes > 0
                ? try OriginalStore(folder: dataFolder.appendingPathComponent("originals"), budget: configuration.originalsDiskBytes) : nil,
            prewarmMakesMissedAVIF: prewarmMakesMissedAVIF, answerWithin: configuration.answerWithin, nodeName: nodeName, logger: logger)
    }
}
