/// The pages' numbers: the page cache (`PageCache` fills them, at the top of
/// `CacheStats`) and the rows rendered ahead (`RowPreparation`).
extension CacheStats {
    static let pageNumbers: [StatNumber] = [
        .gauge("page_cache_entries") { $0.pages.entries }, .gauge("page_cache_bytes", .bytes) { $0.pages.bytes },
        .gauge("page_cache_budget_bytes", .bytes) { $0.pages.budgetBytes },
        .counter("page_cache_hits") { $0.pageHits }, .counter("page_cache_misses") { $0.pageMisses },
        .counter("page_cache_not_kept") { $0.pageNotKept },
    ]

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
        /// Walks over the whole feed done by this process (a template change,
        /// or rows lying scattered in the row file).
        public var sweeps = 0
        /// Reads of the row file most pages took when last sampled (the median;
        /// 1: rows in page order); a sweep lays them out again past `RowPreparation.scattered`.
        public var readsPerPage: Double?
        /// Rows a page found corrupt in the store (flipped or cut bytes), served
        /// from their items and prepared again by this process.
        public var repaired = 0
        /// Whether the last pass found nothing left to prepare (false while a
        /// walk or a batch of new rows is under way).
        public var caughtUp = false
        /// The last store error, if the last pass failed.
        public var lastError: String?

        static let numbers: [StatNumber] = [
            .flag("rows_ahead") { $0.rows?.ahead }, .words("rows_reason") { $0.rows?.reason }, .words("rows_tag") { $0.rows?.tag },
            // Stored rows a page found corrupt, served from their items and prepared again (issue 34).
            .counter("rows_prepared") { $0.rows?.prepared }, .counter("rows_repaired") { $0.rows?.repaired },
            .counter("rows_sweeps") { $0.rows?.sweeps }, .flag("rows_caught_up") { $0.rows?.caughtUp },
            .words("rows_last_error") { $0.rows?.lastError }, .gauge("rows_reads_per_page", .count) { $0.rows?.readsPerPage },
        ]
    }
}
