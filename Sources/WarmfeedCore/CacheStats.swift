import Foundation
import Reckoning

/// What `GET /admin/cache` answers, the dashboard shows and `/metrics` sets its
/// gauges from: every feature's numbers at one moment, each section filled by
/// the feature it describes (`StatsPublisher`), so the operator's views read
/// one value and know no feature.
public struct CacheStats: Codable, Sendable {
    /// Nothing yet: each publisher fills its own section.
    public init() {}

    public struct Tier: Codable, Sendable {
        public init() {}

        public var entries: Int = 0
        public var bytes: Int = 0
        public var budgetBytes: Int = 0
    }

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
    }

    public struct Prewarm: Codable, Sendable {

        public init() {}

        public var queued: Int = 0
        public var running: Int = 0
        public var done: Int = 0
        public var cancelled: Int = 0
        public var dropped: Int = 0
        public var readers: Int = 0
        /// Seconds page 1 took to be warm after the start (or the last import
        /// that changed the top); nil while it is not yet.
        public var pageOneWarmSeconds: Double?
        /// How many readers have each lead (pages warmed ahead), by lead.
        public var leads: [String: Int] = [:]
        /// Seconds a page takes to warm (render and thumbnails), smoothed; nil before the first.
        public var pageWarmSeconds: Double?
        /// Pages whose WebP is made and whose AVIF waits for CPU to spare (made
        /// only while no page job is queued or running), the one being made included.
        public var avifPagesWaiting: Int = 0
        /// Pages whose AVIF was let go, unmade, because readers outran the AVIF line.
        public var avifPagesDropped: Int = 0
    }

    public struct Origin: Codable, Sendable {

        public init() {}

        public var fetches: Int = 0
        public var errors: Int = 0
        public var inFlight: Int = 0
        /// Fetches that waited past their bound for a connection to a busy origin (a placeholder, not remembered as a failure).
        public var busy: Int = 0
        /// Fetches nobody waited for any more (a reader left, pre-warm moved on).
        public var cancelled: Int = 0
        /// Fetches sent again on a new connection: the kept-alive one failed before the answer (closed idle, a stale 408).
        public var retried: Int = 0
        /// Fetches refused before a byte was sent (counted in `errors` too): a feed's image
        /// led to an address the operator did not allow (`--allow-origin`), or a folder
        /// import's file was outside the folder or behind a symbolic link.
        public var refused: Int = 0
        /// Bytes of originals in memory as they arrive, on the wire and waiting for
        /// libvips, their bound (half of `--originals-mb`), and the most held at once.
        public var bodyBytes = 0
        public var bodyBudgetBytes = 0
        public var bodyPeakBytes = 0
        /// Times a body paused for room since the start, and fetches ended
        /// (busy, not remembered) so the others could go on.
        public var bodyPauses = 0
        public var bodyShed = 0
        public var latency: Latency = Latency()
    }

    /// The configured source and what its imports did (absent without `--source`).
    public typealias Source = RefreshStatus

    /// The HTTP server's connections: held now, shed since start and why.
    /// The HTTP server's connections, held and shed (`HTTPServer.connections`).
    public typealias Connections = ConnectionCounts

    /// Rows rendered ahead (`RowPreparation`).
    public struct Rows: Codable, Sendable, Equatable {
        public init() {}

        /// Whether rows are rendered ahead at all (the templates allow it).
        public var ahead = false
        /// Why not, when not.
        public var reason: String?
        /// The templates' tag, in hex.
        public var tag: String?
        /// Rows rendered and kept by this process.
        public var prepared = 0
        /// Walks over the whole feed done by this process (a template change).
        public var sweeps = 0
        /// Rows a page found corrupt in the store (flipped or cut bytes), served
        /// from their items and prepared again by this process.
        public var repaired = 0
        /// Whether the last pass found nothing left to prepare (false while a
        /// walk or a batch of new rows is under way).
        public var caughtUp = false
        /// The last store error, if the last pass failed.
        public var lastError: String?
    }

    /// The allocator: taken from the system for its heaps and as mappings,
    /// in use, and free but kept by its arenas.
    public struct Allocator: Codable, Sendable {
        public init() {}

        /// Taken from the system for the arenas' heaps (brk and the heaps of the other arenas).
        public var heapBytes = 0
        /// Taken as mappings of their own (the largest blocks).
        public var mappedBytes = 0
        /// In use by the program.
        public var inUseBytes = 0
        /// Free, but kept by the arenas for later allocations.
        public var freeBytes = 0
    }

    /// The memory libvips' decodes hold (`--decode-mb`), as estimated from
    /// each picture's header before it is decoded, and what the budget did.
    public struct Decode: Codable, Sendable {
        public init() {}

        /// The budget, what the decodes running now hold, and the most ever held at once.
        public var budgetBytes = 0
        public var inUseBytes = 0
        public var peakBytes = 0
        /// Decodes running now, and waiting for room now.
        public var running = 0
        public var waiting = 0
        /// Decodes let in since the start, and of those how many waited for room.
        public var admitted = 0
        public var waited = 0
        /// Pictures refused since the start: their decode needs more than the whole budget.
        public var refused = 0
        /// libvips work stopped at its deadline since the start.
        public var timedOut = 0
    }

    /// The feed store: which, where, and whether it answers.
    public struct Store: Codable, Sendable {
        public init() {}

        public var backend: String = ""
        public var location: String = ""
        public var answering: Bool = false
        public var problem: String?
        public var revision: Int = 0
        /// A PostgreSQL node's own copy of the feed's rows (`NodeCopy`), when it keeps one.
        public var copy: StoreStatus.Copy?
    }

    /// Originals kept on disk after their fetch (`--originals-disk-mb`), so an
    /// item's later variants need no second fetch, and how variants found one.
    public struct Originals: Codable, Sendable {
        public init() {}

        public var disk: Tier = Tier()
        /// Variants made from an original read back from disk, and from one still in memory.
        public var fromDisk: Int = 0
        public var fromMemory: Int = 0
    }

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

    /// The shared tier on Redis: what Redis holds, and what this node did with it.
    public struct Shared: Codable, Sendable {
        public init() {}

        public var location: String = ""
        /// Whether Redis answers; while it does not, this node serves from its own tiers.
        public var up: Bool = false
        public var problem: String?
        /// Keys and bytes in Redis (all nodes' thumbnails, failures and claims), and its maxmemory.
        public var keys: Int?
        public var bytes: Int?
        public var maxBytes: Int?
        /// Lookups from this node that found a thumbnail, found a failure, found nothing.
        public var hits: Int = 0
        public var failedHits: Int = 0
        public var misses: Int = 0
        public var writes: Int = 0
        /// Claims on fetching an original this node won (it fetched and owns it), waited on
        /// (another node owned it or met its failure), took over from a node that went away,
        /// and could not ask for (Redis down or slow).
        public var claimsWon: Int = 0
        public var claimsWaited: Int = 0
        public var claimsTakenOver: Int = 0
        public var claimsUnavailable: Int = 0
        /// Claims asked again because this node's own queue to Redis was full (not counted as Redis errors).
        public var claimsBusyRetries = 0
        /// Variants this node asked of the node owning their original, and asks that went unanswered
        /// (the owner is forgotten and the original looked for again).
        public var ownerAsks = 0
        public var ownerUnreachable = 0
        /// What this node refused to believe of the cluster: owner records naming a node
        /// not among its peers (never asked), thumbnails in Redis that were not what their
        /// key says (dropped), a peer's answers that were not the thumbnail asked for, and
        /// lifetimes in Redis past their ceiling (cut to it).
        public var ownersRefused = 0
        public var badValues = 0
        public var ownerAnswersRefused = 0
        public var lifetimesCapped = 0
        /// Pages whose thumbnails this node warmed, and pages another node had warmed already.
        public var pagesClaimed: Int = 0
        public var pagesWarmedElsewhere: Int = 0
        /// Redis commands that failed, and the latency of a hit.
        public var errors: Int = 0
        /// Commands this node's pool could not send within its timeout (answered at once
        /// as misses, or asked again for a claim): this node's load, not Redis's failure.
        public var busy = 0
        public var latency: Latency = Latency()
    }

    /// The process's resident memory and what each cache holds, in bytes.
    public struct MemoryUse: Codable, Sendable {
        public init() {}

        /// Resident set size of the whole process (VmRSS).
        public var rssBytes: Int?
        /// Thumbnails in memory.
        public var thumbnailsBytes: Int = 0
        /// Originals kept so an item's other variant needs no second fetch.
        public var originalsBytes: Int = 0
        /// Rendered pages.
        public var pagesBytes: Int = 0
        /// The index of the thumbnails on disk (`--disk-index-mb`), and its budget.
        public var diskIndexBytes: Int = 0
        public var diskIndexBudgetBytes: Int = 0
        /// What SQLite holds: the page caches of the store's connections.
        public var sqliteBytes: Int = 0
        /// Originals the demo origin keeps in memory (0 without it).
        public var demoOriginBytes: Int = 0
        /// The connections' own memory: libmicrohttpd's pool per connection held (32 KiB each).
        public var connectionsBytes = 0
        /// The index of the originals kept on disk.
        public var originalsIndexBytes = 0
        /// The kernel's count of the resident memory: anonymous (heap, stacks,
        /// buffers) and file-backed (the binary and its libraries), and the threads.
        public var anonymousBytes: Int?
        public var fileBytes: Int?
        public var threads: Int?
        /// The allocator: taken from the system for its heaps and as mappings,
        /// in use, and free but kept by its arenas.
        public var allocator: Allocator?
    }

    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return (try? String(decoding: encoder.encode(self), as: UTF8.self)) ?? "{}"
    }
}
