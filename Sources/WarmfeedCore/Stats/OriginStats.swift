extension CacheStats {
    /// The fetches of originals (`OriginFetcher`, through the thumbnails):
    /// what they did, the bytes of bodies held, and their latency.
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

        static let numbers: [StatNumber] = [
            .counter("thumbnail_origin_fetches_total") { $0.origin.fetches }, .counter("thumbnail_origin_errors_total") { $0.origin.errors },
            .gauge("origin_in_flight") { $0.origin.inFlight },
            .counter("origin_busy") { $0.origin.busy }, .counter("origin_cancelled") { $0.origin.cancelled },
            .counter("origin_retried") { $0.origin.retried }, .counter("origin_refused") { $0.origin.refused },
            .gauge("origin_body_bytes", .bytes) { $0.origin.bodyBytes }, .gauge("origin_body_budget_bytes", .bytes) { $0.origin.bodyBudgetBytes },
            .gauge("origin_body_peak_bytes", .bytes) { $0.origin.bodyPeakBytes },
            .counter("origin_body_pauses") { $0.origin.bodyPauses }, .counter("origin_body_shed") { $0.origin.bodyShed },
            .gauge("origin_latency_p50_seconds", .seconds) { $0.origin.latency.p50Seconds },
            .gauge("origin_latency_p99_seconds", .seconds) { $0.origin.latency.p99Seconds },
        ]
    }
}
