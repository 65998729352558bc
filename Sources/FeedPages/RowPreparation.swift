import Logging
import ServiceLifecycle
import Synchronization
import WarmfeedCore

/// Renders each item's row ahead of its readers and keeps it in the store
/// (see `PreparedPage`), so a cold page is a read of bytes
/// prepared once: the escaping and templating of a row is paid once per item
/// write, not once per request.
///
/// At start, when the rows were last prepared with other templates (or by a
/// build that renders them differently: page 1 rendered both ways must be the
/// same bytes), every row is rendered again, oldest id first, in the
/// background; until a row is, pages render it from its item, so readers see
/// the new templates at once. After that, each second, rows written since
/// (new or changed items, which a write leaves unprepared) are rendered. In a
/// cluster every node runs it, and the store hands each batch of rows to one
/// node (PostgreSQL's `FOR UPDATE SKIP LOCKED`), so each row is rendered once.
/// Rows a page found corrupt (`RowRepairs`) are forgotten by the store on the
/// next pass, and so rendered again with the rows written since.
package final class RowPreparation: Service, StatsPublisher, Sendable {
    typealias Status = CacheStats.Rows

    /// Rows rendered and written in one transaction.
    static let batch = 500
    /// The note that names the tag the whole feed was last prepared with.
    static let note = "prepared-rows-tag"

    private let store: any FeedStore
    private let renderer: PageRenderer
    private let pageSize: Int
    private let logger: Logger
    private let repairs: RowRepairs
    private let state: Mutex<Status>
    /// Whether this process made sure the whole feed has this tag (once, on its first pass).
    private let swept = Atomic(false)
    /// Reads of the row file most pages may take (the median of the
    /// samples) before every row is laid out again in page order: rows
    /// prepared as a river's first polls wrote them lie one apart from the
    /// next (30 reads a page where one would do). New rows scattered over
    /// the newest pages sweep the feed only once they are half of it, so a
    /// sweep's cost stays a small multiple of rendering the new rows once.
    static let scattered = 4.0
    /// How often the layout is sampled (64 pages from the page index).
    static let layoutEvery: Duration = .seconds(60)
    private let layoutDue = Mutex(ContinuousClock.now)

    package init(store: any FeedStore, renderer: PageRenderer, pageSize: Int, repairs: RowRepairs = RowRepairs(), logger: Logger) {
        self.store = store
        self.repairs = repairs
        self.renderer = renderer
        self.pageSize = pageSize
        self.logger = logger
        var status = Status()
        status.ahead = renderer.rowTag != nil
        status.reason = renderer.notAhead
        status.tag = renderer.rowTag.map { String($0, radix: 16) }
        state = Mutex(status)
    }

    var status: Status { state.withLock { $0 } }

    package func publish(into stats: inout CacheStats) {
        stats.rows = status
    }

    package func run() async throws {
        guard renderer.rowTag != nil else {
            logger.notice("rows are rendered on each request", metadata: ["reason": "\(renderer.notAhead ?? "")"])
            return
        }
        try? await cancelWhenGracefulShutdown {
            while true {
                do {
                    try await self.catchUp()
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    self.state.withLock {
                        $0.caughtUp = false; $0.lastError = "\(error)"
                    }
                    self.logger.warning("preparing rows failed; pages render rows from their items meanwhile", metadata: ["error": "\(error)"])
                }
                try await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// One pass: on the first, the walk over the whole feed when the
    /// templates changed; then the rows written since. Every node of a
    /// cluster runs it; the store hands each row to one of them.
    func catchUp() async throws {
        guard let tag = renderer.rowTag else { return }
        if !swept.load(ordering: .relaxed) {
            if try await needsSweep(tag) { try await prepare(tag, sweep: true) }
            try await store.setNote(Self.note, String(tag))
            swept.store(true, ordering: .relaxed)
        }
        try await forgetCorruptRows()
        try await prepare(tag, sweep: false)
        try await layOutAgainWhenScattered(tag)
        state.withLock {
            $0.caughtUp = true; $0.lastError = nil
        }
    }

    /// Samples how the rows lie (at most every `layoutEvery`), and sweeps
    /// when most pages take more than `scattered` reads: every row is rendered
    /// again, laid out in page order.
    private func layOutAgainWhenScattered(_ tag: UInt32) async throws {
        let now = ContinuousClock.now
        let due = layoutDue.withLock { due in
            guard now >= due else { return false }
            due = now + Self.layoutEvery
            return true
        }
        guard due, let reads = await store.rowReadsPerPage(size: pageSize) else { return }
        state.withLock { $0.readsPerPage = reads }
        guard reads > Self.scattered else { return }
        logger.info(
            "rows lie scattered in the row file; rendering every row again, in page order",
            metadata: ["reads a page": "\((reads * 10).rounded() / 10)"])
        try await prepare(tag, sweep: true)
        state.withLock { $0.readsPerPage = nil }
    }

    /// Whether every row must be rendered again: the feed was last prepared
    /// with other templates, or page 1 from its prepared rows is not the page
    /// its items make (a build that renders rows differently).
    private func needsSweep(_ tag: UInt32) async throws -> Bool {
        guard try await store.note(Self.note) == String(tag) else { return true }
        guard let page = try await store.page(.number(1), size: pageSize),
            let prepared = try await store.preparedPage(.number(1), size: pageSize, tag: tag)
        else { return false }
        let query = PageQuery(request: .number(1), number: 1)
        let same = renderer.fragment(of: page, query: query, number: 1) == renderer.fragment(of: prepared, query: query, number: 1)
        if !same { logger.warning("rows prepared earlier differ from the rows this build renders; rendering every row again") }
        return !same
    }

    /// Has the store forget the rows pages found corrupt, so this pass prepares them again.
    private func forgetCorruptRows() async throws {
        let corrupt = repairs.take()
        guard !corrupt.isEmpty else { return }
        do {
            try await store.forgetPreparedRows(corrupt)
        } catch {
            repairs.note(corrupt)
            throw error
        }
        state.withLock { $0.repaired += corrupt.count }
        logger.warning(
            "rows were corrupt in the store (served from their items meanwhile); preparing them again",
            metadata: ["rows": "\(corrupt.count)", "ids": "\(corrupt.prefix(10).map(String.init).joined(separator: ","))"])
    }

    /// Renders and keeps every row to prepare, in batches by id.
    private func prepare(_ tag: UInt32, sweep: Bool) async throws {
        let renderer = renderer
        let started = ContinuousClock.now
        var after: Int64 = 0
        var count = 0
        while let batch = try await store.prepareRows(tag: tag, sweep: sweep, after: after, limit: Self.batch, render: { renderer.prepare($0) }) {
            try Task.checkCancellation()
            if count == 0 { state.withLock { $0.caughtUp = false } }
            count += batch.kept
            state.withLock { $0.prepared += batch.kept }
            after = batch.last
        }
        if sweep { state.withLock { $0.sweeps += 1 } }
        guard count > 0 || sweep else { return }
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        logger.info(sweep ? "rendered every row ahead" : "rendered new rows ahead", metadata: ["rows": "\(count)", "seconds": "\(seconds)"])
    }
}
