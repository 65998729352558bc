import Foundation

/// What `GET /admin/cache` answers, the dashboard shows and `/metrics` sets its
/// series from: every feature's numbers at one moment, each section filled by
/// the feature it describes (`StatsPublisher`), so the operator's views read
/// one value and know no feature.
///
/// Each feature's section, and the list of its numbers (`StatNumber`: each
/// named once, with its kind and unit), are in one file beside this one; a
/// section's fields that sit at the top (the thumbnails', the page cache's)
/// keep the JSON paths operators read (`OperatorNamesTests`).
public struct CacheStats: Codable, Sendable {
    /// Nothing yet: each publisher fills its own section.
    public init() {}

    public var uptimeSeconds: Double = 0
    public var store: Store = Store()
    public var source: Source?
    public var memory: Tier = Tier()
    public var disk: Tier = Tier()
    public var originals: Originals = Originals()
    /// libvips' decodes: their memory and its budget (`--decode-mb`).
    public var decode = Decode()
    public var diskCorruptFilesReplaced: Int = 0
    /// The most thumbnails the disk tier's index holds within its memory budget.
    public var diskMaxEntries: Int = 0
    public var pages: Tier = Tier()
    /// Readers' page requests answered from the page cache, and not.
    public var pageHits: Int = 0
    public var pageMisses: Int = 0
    /// Of the misses, renderings not kept: their page asked for once, or no more often than the page it would evict (`PageCache.admission`).
    public var pageNotKept: Int = 0
    public var hits: Int = 0
    public var misses: Int = 0
    public var hitRatio: Double?
    public var coalesced: Int = 0
    public var evictions: Int = 0
    public var diskHits: Int = 0
    public var negativeEntries: Int = 0
    public var negativeHits: Int = 0
    public var failures: Int = 0
    public var inFlight: Int = 0
    public var prewarm: Prewarm = Prewarm()
    public var origin: Origin = Origin()
    public var thumbnailLatency: Latency = Latency()
    /// The HTTP server's connections: held now, shed since start and why.
    public var connections = Connections()
    /// Where the process's memory goes: its resident size beside every cache's bytes.
    public var memoryUse: MemoryUse = MemoryUse()
    /// This node's name (`--node-name`).
    public var node = ""
    /// Thumbnails resized on this node.
    public var resizes = 0
    /// Readers whose browsers take AVIF answered with the WebP, the AVIF not
    /// made yet (it is then made for the next reader; pre-warm makes it ahead).
    public var avifFallbacks = 0
    /// Readers' misses answered by the shared tier (a thumbnail another node made, or this one before).
    public var sharedHits = 0
    /// The cluster's shared tier (absent without `--redis`).
    public var shared: Shared?
    /// Rows rendered ahead (`RowPreparation`).
    public var rows: Rows?

    /// Every number an operator reads, each feature's list in turn: what
    /// `/metrics` and the dashboard are made from.
    public static let numbers: [StatNumber] =
        processNumbers + Store.numbers + sourceNumbers + Rows.numbers + pageNumbers + thumbnailNumbers + Decode.numbers
        + Origin.numbers + Prewarm.numbers + Shared.numbers + connectionNumbers + MemoryUse.numbers

    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return (try? String(decoding: encoder.encode(self), as: UTF8.self)) ?? "{}"
    }
}

extension CacheStats {
    /// A count of things held, their bytes, and the bytes they may take.
    public struct Tier: Codable, Sendable {
        public init() {}

        public var entries: Int = 0
        public var bytes: Int = 0
        public var budgetBytes: Int = 0
    }

    /// A timing's count and percentiles over its recent window.
    public struct Latency: Codable, Sendable {
        public var count: Int = 0
        public var p50Ms: Double?
        public var p99Ms: Double?

        public init() {}

        /// The window's count and percentiles, in milliseconds.
        public init(_ window: LatencyWindow) {
            count = window.total
            p50Ms = window.percentile(0.5).map { $0 * 1000 }
            p99Ms = window.percentile(0.99).map { $0 * 1000 }
        }

        /// The percentiles in seconds, as `/metrics` names them.
        public var p50Seconds: Double? { p50Ms.map { $0 / 1000 } }
        public var p99Seconds: Double? { p99Ms.map { $0 / 1000 } }
    }
}
