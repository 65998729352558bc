/// The thumbnails' numbers (`ThumbnailService` fills them): the tiers in
/// memory and on disk, the machine's events, the originals kept, and
/// libvips' decodes. Their fields sit at the top of `CacheStats`, where
/// operators have read them since the first dashboard.
extension CacheStats {
    static let thumbnailNumbers: [StatNumber] = [
        .gauge("memory_entries") { $0.memory.entries }, .gauge("memory_bytes", .bytes) { $0.memory.bytes },
        .gauge("memory_budget_bytes", .bytes) { $0.memory.budgetBytes },
        .gauge("disk_entries") { $0.disk.entries }, .gauge("disk_bytes", .bytes) { $0.disk.bytes },
        .gauge("disk_budget_bytes", .bytes) { $0.disk.budgetBytes },
        .gauge("disk_max_entries") { $0.diskMaxEntries }, .counter("disk_corrupt_files_replaced") { $0.diskCorruptFilesReplaced },
        .gauge("negative_entries") { $0.negativeEntries }, .gauge("in_flight") { $0.inFlight },
        .gauge("hit_ratio", .ratio) { $0.hitRatio },
        // Readers' thumbnail requests as the thumbnail machine decided them, and what its jobs did.
        .counter("thumbnail_hits_total") { $0.hits }, .counter("thumbnail_misses_total") { $0.misses },
        .counter("thumbnail_coalesced_total") { $0.coalesced }, .counter("thumbnail_negative_hits_total") { $0.negativeHits },
        .counter("thumbnail_evictions_total") { $0.evictions }, .counter("thumbnail_failures_total") { $0.failures },
        .counter("thumbnail_disk_hits_total") { $0.diskHits }, .counter("thumbnail_shared_hits_total") { $0.sharedHits },
        .counter("thumbnail_resizes_total") { $0.resizes }, .counter("avif_fallbacks") { $0.avifFallbacks },
        .gauge("thumbnail_latency_p50_seconds", .seconds) { $0.thumbnailLatency.p50Seconds },
        .gauge("thumbnail_latency_p99_seconds", .seconds) { $0.thumbnailLatency.p99Seconds },
        // Originals kept on disk after their fetch, and where variants found theirs.
        .gauge("originals_disk_entries") { $0.originals.disk.entries }, .gauge("originals_disk_bytes", .bytes) { $0.originals.disk.bytes },
        .gauge("originals_disk_budget_bytes", .bytes) { $0.originals.disk.budgetBytes },
        .counter("originals_from_disk") { $0.originals.fromDisk }, .counter("originals_from_memory") { $0.originals.fromMemory },
    ]

    /// Originals kept on disk after their fetch (`--originals-disk-mb`), so an
    /// item's later variants need no second fetch, and how variants found one.
    public struct Originals: Codable, Sendable {
        public init() {}

        public var disk: Tier = Tier()
        /// Variants made from an original read back from disk, and from one still in memory.
        public var fromDisk: Int = 0
        public var fromMemory: Int = 0
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

        static let numbers: [StatNumber] = [
            .gauge("decode_budget_bytes", .bytes) { $0.decode.budgetBytes }, .gauge("decode_in_use_bytes", .bytes) { $0.decode.inUseBytes },
            .gauge("decode_peak_bytes", .bytes) { $0.decode.peakBytes }, .gauge("decode_running") { $0.decode.running },
            .gauge("decode_waiting") { $0.decode.waiting }, .counter("decode_admitted") { $0.decode.admitted },
            .counter("decode_waited") { $0.decode.waited }, .counter("decode_refused") { $0.decode.refused },
            .counter("decode_timed_out") { $0.decode.timedOut },
        ]
    }
}
