/// The store's numbers (the root's store service fills them) and the
/// configured sources' (`SourcePoller`; absent without `--source`).
extension CacheStats {
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

        static let numbers: [StatNumber] = [
            .words("store_backend") { $0.store.backend }, .words("store_location") { $0.store.location },
            .flag("store_up") { $0.store.answering }, .words("store_problem") { $0.store.problem },
            .gauge("store_revision") { $0.store.revision },
            .gauge("store_copy_writes") { $0.store.copy?.writes },
            .counter("store_copy_pages_from_copy") { $0.store.copy?.pagesFromCopy },
            .counter("store_copy_pages_from_store") { $0.store.copy?.pagesFromStore },
            .counter("store_copy_catch_ups") { $0.store.copy?.catchUps }, .counter("store_copy_rows_copied") { $0.store.copy?.rowsCopied },
            .counter("store_copy_rebuilds") { $0.store.copy?.rebuilds }, .words("store_copy_problem") { $0.store.copy?.problem },
        ]
    }

    /// The configured sources and what their polls did (absent without `--source`).
    public typealias Source = RefreshStatus

    static let sourceNumbers: [StatNumber] = [
        .words("source") { $0.source?.source }, .gauge("source_refresh_seconds", .seconds) { $0.source?.refreshSeconds },
        .flag("source_polled_elsewhere") { $0.source?.polledElsewhere },
        .gauge("source_servers_polling") { $0.source?.serversPolling },
        .counter("source_imports") { $0.source?.imports }, .counter("source_not_modified") { $0.source?.notModified },
        .counter("source_failures") { $0.source?.failures }, .words("source_last_import_at") { $0.source?.lastImportAt },
        .gauge("source_last_inserted") { $0.source?.lastInserted }, .gauge("source_last_updated") { $0.source?.lastUpdated },
        .gauge("source_last_problems") { $0.source?.lastProblems }, .words("source_last_error") { $0.source?.lastError },
        .gauge("sources_listed") { $0.source?.sources }, .gauge("sources_failing") { $0.source?.failing },
        .gauge("sources_failing_for_days") { $0.source?.failingForDays }, .gauge("source_hosts_held") { $0.source?.hostsHeld },
        .gauge("source_polls_in_flight") { $0.source?.inFlight }, .gauge("source_polls_waiting") { $0.source?.waiting },
        .counter("source_polls_throttled") { $0.source?.throttled }, .counter("source_bytes") { $0.source?.bytes },
        .counter("sources_added") { $0.source?.added }, .counter("sources_removed") { $0.source?.removed },
        .counter("source_list_reads") { $0.source?.listReads }, .counter("source_list_problems") { $0.source?.listProblems },
        .words("source_list_last_problem") { $0.source?.listLastProblem },
    ]
}
