extension CacheStats {
    /// Pre-warm's numbers (`Prewarmer` fills them): its planner's jobs, its
    /// readers and their leads, and its AVIF line.
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
        /// Readers' page views handed to the planner.
        public var views: Int = 0
        /// Readers' page views let go because their thread's ring was full
        /// (more views between two drains than a ring holds): the planner
        /// follows those readers from their next view.
        public var viewsDropped: Int = 0

        static let numbers: [StatNumber] = [
            .gauge("prewarm_queued") { $0.prewarm.queued }, .gauge("prewarm_running") { $0.prewarm.running },
            // Pre-warm's jobs, as its planner counted them.
            .counter("thumbnail_prewarm_done_total") { $0.prewarm.done }, .counter("thumbnail_prewarm_cancelled_total") { $0.prewarm.cancelled },
            .counter("thumbnail_prewarm_dropped_total") { $0.prewarm.dropped },
            .gauge("prewarm_readers") { $0.prewarm.readers },
            .gauge("prewarm_page_one_warm_seconds", .seconds) { $0.prewarm.pageOneWarmSeconds },
            .gauge("prewarm_page_warm_seconds", .seconds) { $0.prewarm.pageWarmSeconds },
            .words("prewarm_leads") { $0.prewarm.leadsInWords },
            .gauge("prewarm_avif_pages_waiting") { $0.prewarm.avifPagesWaiting },
            .counter("prewarm_avif_pages_dropped") { $0.prewarm.avifPagesDropped },
            .counter("prewarm_views_total") { $0.prewarm.views }, .counter("prewarm_views_dropped_total") { $0.prewarm.viewsDropped },
        ]

        /// The leads, shortest first: "1 pages × 3, 4 pages × 1" (nil: no reader has one).
        var leadsInWords: String? {
            leads.isEmpty
                ? nil : leads.sorted { Int($0.key) ?? 0 < Int($1.key) ?? 0 }.map { "\($0.key) pages × \($0.value)" }.joined(separator: ", ")
        }
    }
}
