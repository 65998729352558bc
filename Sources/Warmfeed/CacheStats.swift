import FeedImport
import FeedIngest
import Foundation
import HTTPServer
import WarmfeedCore

/// What `GET /admin/cache` answers: the cache and the pre-warmer at one moment.
struct CacheStats: Codable, Sendable {
    struct Tier: Codable, Sendable {
        var entries: Int
        var bytes: Int
        var budgetBytes: Int
    }

    struct Latency: Codable, Sendable {
        var count: Int
        var p50Ms: Double?
        var p99Ms: Double?

        /// The window's count and percentiles, in milliseconds.
        init(_ window: LatencyWindow) {
            count = window.total
            p50Ms = window.percentile(0.5).map { $0 * 1000 }
            p99Ms = window.percentile(0.99).map { $0 * 1000 }
        }
    }

    struct Prewarm: Codable, Sendable {
        var queued: Int
        var running: Int
        var done: Int
        var cancelled: Int
        var dropped: Int
        var readers: Int
        /// Seconds page 1 took to be warm after the start (or the last import
        /// that changed the top); nil while it is not yet.
        var pageOneWarmSeconds: Double?
        /// How many readers have each lead (pages warmed ahead), by lead.
        var leads: [String: Int]
        /// Seconds a page takes to warm (render and thumbnails), smoothed; nil before the first.
        var pageWarmSeconds: Double?
    }

    struct Origin: Codable, Sendable {
        var fetches: Int
        var errors: Int
        var inFlight: Int
        /// Fetches that waited past their bound for a connection to a busy origin (a placeholder, not remembered as a failure).
        var busy: Int
        /// Fetches nobody waited for any more (a reader left, pre-warm moved on).
        var cancelled: Int
        /// Fetches sent again on a new connection: the kept-alive one failed before the answer (closed idle, a stale 408).
        var retried: Int
        var latency: Latency
    }

    /// The configured source and what its imports did (absent without `--source`).
    typealias Source = RefreshStatus

    /// The feed store: which, where, and whether it answers.
    struct Store: Codable, Sendable {
        var backend: String
        var location: String
        var answering: Bool
        var problem: String?
        var revision: Int
    }

    /// Originals kept on disk after their fetch (`--originals-disk-mb`), so an
    /// item's later variants need no second fetch, and how variants found one.
    struct Originals: Codable, Sendable {
        var disk: Tier
        /// Variants made from an original read back from disk, and from one still in memory.
        var fromDisk: Int
        var fromMemory: Int
    }

    var uptimeSeconds: Double
    var store: Store
    var source: Source?
    var memory: Tier
    var disk: Tier
    var originals: Originals
    var diskCorruptFilesReplaced: Int
    /// The most thumbnails the disk tier's index holds within its memory budget.
    var diskMaxEntries: Int
    var pages: Tier
    /// Readers' page requests answered from the page cache, and not.
    var pageHits: Int
    var pageMisses: Int
    /// Of the misses, renderings not kept: their page was asked for once (`PageCache.admits`).
    var pageNotKept: Int
    var hits: Int
    var misses: Int
    var hitRatio: Double?
    var coalesced: Int
    var evictions: Int
    var diskHits: Int
    var negativeEntries: Int
    var negativeHits: Int
    var failures: Int
    var inFlight: Int
    var prewarm: Prewarm
    var origin: Origin
    var thumbnailLatency: Latency
    /// The HTTP server's connections: held now, shed since start and why.
    var connections: ConnectionCounts
    /// Where the process's memory goes: its resident size beside every cache's bytes.
    var memoryUse: MemoryUse
    /// This node's name (`--node-name`).
    var node = ""
    /// Thumbnails resized on this node.
    var resizes = 0
    /// Readers' misses answered by the shared tier (a thumbnail another node made, or this one before).
    var sharedHits = 0
    /// The cluster's shared tier (absent without `--redis`).
    var shared: Shared?
    /// Rows rendered ahead (`RowPreparation`).
    var rows: RowPreparation.Status?

    /// The shared tier on Redis: what Redis holds, and what this node did with it.
    struct Shared: Codable, Sendable {
        var location: String
        /// Whether Redis answers; while it does not, this node serves from its own tiers.
        var up: Bool
        var problem: String?
        /// Keys and bytes in Redis (all nodes' thumbnails, failures and claims), and its maxmemory.
        var keys: Int?
        var bytes: Int?
        var maxBytes: Int?
        /// Lookups from this node that found a thumbnail, found a failure, found nothing.
        var hits: Int
        var failedHits: Int
        var misses: Int
        var writes: Int
        /// Claims on fetching an original this node won (it fetched and owns it), waited on
        /// (another node owned it or met its failure), took over from a node that went away,
        /// and could not ask for (Redis down or slow).
        var claimsWon: Int
        var claimsWaited: Int
        var claimsTakenOver: Int
        var claimsUnavailable: Int
        /// Claims asked again because this node's own queue to Redis was full (not counted as Redis errors).
        var claimsBusyRetries = 0
        /// Variants this node asked of the node owning their original, and asks that went unanswered
        /// (the owner is forgotten and the original looked for again).
        var ownerAsks = 0
        var ownerUnreachable = 0
        /// Pages whose thumbnails this node warmed, and pages another node had warmed already.
        var pagesClaimed: Int
        var pagesWarmedElsewhere: Int
        /// Redis commands that failed, and the latency of a hit.
        var errors: Int
        /// Commands this node's pool could not send within its timeout (answered at once
        /// as misses, or asked again for a claim): this node's load, not Redis's failure.
        var busy = 0
        var latency: Latency
    }

    /// The process's resident memory and what each cache holds, in bytes.
    struct MemoryUse: Codable, Sendable {
        /// Resident set size of the whole process (VmRSS).
        var rssBytes: Int?
        /// Thumbnails in memory.
        var thumbnailsBytes: Int
        /// Originals kept so an item's other variant needs no second fetch.
        var originalsBytes: Int
        /// Rendered pages.
        var pagesBytes: Int
        /// The index of the thumbnails on disk (`--disk-index-mb`), and its budget.
        var diskIndexBytes: Int
        var diskIndexBudgetBytes: Int
        /// What SQLite holds: the page caches of the store's connections.
        var sqliteBytes: Int
        /// Originals the demo origin keeps in memory (0 without it).
        var demoOriginBytes: Int
        /// The connections' own memory: libmicrohttpd's pool per connection held (32 KiB each).
        var connectionsBytes = 0
        /// The index of the originals kept on disk.
        var originalsIndexBytes = 0
        /// The kernel's count of the resident memory: anonymous (heap, stacks,
        /// buffers) and file-backed (the binary and its libraries), and the threads.
        var anonymousBytes: Int?
        var fileBytes: Int?
        var threads: Int?
        /// The allocator: taken from the system for its heaps and as mappings,
        /// in use, and free but kept by its arenas.
        var allocator: Allocator.Usage?
    }

    func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return (try? String(decoding: encoder.encode(self), as: UTF8.self)) ?? "{}"
    }
}
