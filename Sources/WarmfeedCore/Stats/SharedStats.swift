/// A cluster's numbers (`SharedTier` fills them; absent without `--redis`):
/// what Redis holds, and what this node did with it and its peers.
extension CacheStats {
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
        /// Claims asked again because Redis had stopped answering a moment before (a stall,
        /// or the first moments of an outage), rather than fetched without one.
        public var claimsOutageRetries = 0
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

        static let numbers: [StatNumber] = [
            .words("node") { $0.shared == nil ? nil : $0.node },
            .words("shared_location") { $0.shared?.location }, .flag("shared_up") { $0.shared?.up },
            .words("shared_problem") { $0.shared?.problem },
            .gauge("shared_keys") { $0.shared?.keys }, .gauge("shared_bytes", .bytes) { $0.shared?.bytes },
            .gauge("shared_max_bytes", .bytes) { $0.shared?.maxBytes },
            .counter("shared_hits") { $0.shared?.hits }, .counter("shared_failed_hits") { $0.shared?.failedHits },
            .counter("shared_misses") { $0.shared?.misses }, .counter("shared_writes") { $0.shared?.writes },
            .counter("shared_claims_won") { $0.shared?.claimsWon }, .counter("shared_claims_waited") { $0.shared?.claimsWaited },
            .counter("shared_claims_taken_over") { $0.shared?.claimsTakenOver },
            .counter("shared_claims_unavailable") { $0.shared?.claimsUnavailable },
            .counter("shared_claims_busy_retries") { $0.shared?.claimsBusyRetries },
            .counter("shared_claims_outage_retries") { $0.shared?.claimsOutageRetries },
            .counter("shared_owner_asks") { $0.shared?.ownerAsks }, .counter("shared_owner_unreachable") { $0.shared?.ownerUnreachable },
            // What a node refused to believe of Redis and its peers (issue 34).
            .counter("shared_owners_refused") { $0.shared?.ownersRefused }, .counter("shared_bad_values") { $0.shared?.badValues },
            .counter("shared_owner_answers_refused") { $0.shared?.ownerAnswersRefused },
            .counter("shared_lifetimes_capped") { $0.shared?.lifetimesCapped },
            .counter("shared_pages_claimed") { $0.shared?.pagesClaimed },
            .counter("shared_pages_warmed_elsewhere") { $0.shared?.pagesWarmedElsewhere },
            .counter("shared_errors") { $0.shared?.errors }, .counter("shared_busy") { $0.shared?.busy },
            .gauge("shared_latency_p50_seconds", .seconds) { $0.shared?.latency.p50Seconds },
            .gauge("shared_latency_p99_seconds", .seconds) { $0.shared?.latency.p99Seconds },
        ]
    }
}
