import Reckoning
import SystemMemory

/// The process's own numbers (the observer fills them): how long it has run,
/// its memory beside every cache's, and the HTTP server's connections.
extension CacheStats {
    static let processNumbers: [StatNumber] = [.gauge("uptime_seconds", .seconds) { $0.uptimeSeconds }]

    /// The HTTP server's connections, held and shed (`HTTPServer.connections`).
    public typealias Connections = ConnectionCounts

    static let connectionNumbers: [StatNumber] = [
        .gauge("connections_held") { $0.connections.held }, .gauge("connections_waiting") { $0.connections.waiting },
        .counter("connections_shed_slow_head") { $0.connections.slowHeads }, .counter("connections_closed_idle") { $0.connections.idleClosed },
        .counter("connections_shed_for_room") { $0.connections.madeRoom }, .counter("connections_refused") { $0.connections.refused },
        .counter("connections_malformed") { $0.connections.malformed }, .counter("connections_waits_shed") { $0.connections.waitsShed },
        .counter("connections_waits_late") { $0.connections.waitsLate },
    ]

    /// The allocator: taken from the system for its heaps and as mappings,
    /// in use, and free but kept by its arenas.
    public typealias Allocator = SystemMemory.Allocator.Usage

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
        /// The connections' own memory: the read buffer of each connection held (32 KiB each).
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

        /// The thumbnails' and the pages' bytes are `memory_bytes` and
        /// `page_cache_bytes`, the same numbers, not named again.
        static let numbers: [StatNumber] = [
            .gauge("resident_bytes", .bytes) { $0.memoryUse.rssBytes },
            .gauge("originals_bytes", .bytes) { $0.memoryUse.originalsBytes },
            .gauge("disk_index_bytes", .bytes) { $0.memoryUse.diskIndexBytes },
            .gauge("disk_index_budget_bytes", .bytes) { $0.memoryUse.diskIndexBudgetBytes },
            .gauge("originals_index_bytes", .bytes) { $0.memoryUse.originalsIndexBytes },
            .gauge("sqlite_bytes", .bytes) { $0.memoryUse.sqliteBytes },
            .gauge("demo_origin_bytes", .bytes) { $0.memoryUse.demoOriginBytes },
            .gauge("connections_bytes", .bytes) { $0.memoryUse.connectionsBytes },
            .gauge("anonymous_bytes", .bytes) { $0.memoryUse.anonymousBytes },
            .gauge("file_bytes", .bytes) { $0.memoryUse.fileBytes }, .gauge("threads") { $0.memoryUse.threads },
            .gauge("allocator_heap_bytes", .bytes) { $0.memoryUse.allocator?.heapBytes },
            .gauge("allocator_mapped_bytes", .bytes) { $0.memoryUse.allocator?.mappedBytes },
            .gauge("allocator_in_use_bytes", .bytes) { $0.memoryUse.allocator?.inUseBytes },
            .gauge("allocator_free_bytes", .bytes) { $0.memoryUse.allocator?.freeBytes },
        ]
    }
}
