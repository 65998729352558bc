import Foundation
import PageFiles
import PostgresWire
import Synchronization

/// Keeps a `NodeCopy` current from PostgreSQL, on a thread and a connection
/// of its own, from its start until `stop()`.
///
/// A catch-up reads, in one repeatable-read transaction (one snapshot), the
/// feed's write count and size and every item whose `changed` (the id of the
/// transaction that last wrote it) is at or past the copy's horizon: the
/// oldest transaction still running when the copy last caught up
/// (`pg_snapshot_xmin`), so a write that committed after a later one is still
/// found. Rows already copied at the same `changed` are skipped; each other
/// row's prepared bytes are appended to the row file and its record written
/// at its rank, between the index's `begin` and `finish` (readers meanwhile
/// ask PostgreSQL). Every rank a write moved belongs to a row the write
/// changed, so after a catch-up every record up to the count is the
/// snapshot's.
///
/// The copy is rebuilt from nothing when its files are missing, cut or of
/// another store (epoch), and when the row file has grown past twice the bytes
/// its records point at plus 64 MiB (rows prepared again leave their old bytes
/// behind; the records are summed only when the file passes that mark). While PostgreSQL is away it reconnects, as the listener does.
final class NodeCopyKeeper: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let done = Atomic<Bool>(false)
    /// Old bytes a row file may hold beyond twice its live ones before it is made again.
    let slack: Int64

    /// Starts keeping `copy` for `store` (a test may start no thread, and call `catchUp` itself).
    init(store: PostgresFeedStore, copy: NodeCopy, starting: Bool = true, slack: Int64 = 64 << 20) {
        self.slack = slack
        guard starting else {
            done.store(true, ordering: .releasing)
            return
        }
        let thread = Thread { [self] in
            var state = State()
            keep(copy, for: store, state: &state)
            done.store(true, ordering: .releasing)
        }
        thread.name = "warmfeed-postgres-copy"
        thread.start()
    }

    /// Asks the thread to end; it sees it within a tenth of a second (or when its query ends).
    func stop() { stopping.store(true, ordering: .relaxed) }

    /// Whether the thread has ended.
    var ended: Bool { done.load(ordering: .acquiring) }

    private var stopped: Bool { stopping.load(ordering: .relaxed) }

    /// What the keeper remembers between catch-ups (its thread's alone).
    struct State {
        /// Rows copied at or past the horizon, by id, with the `changed` they were copied at.
        var copied: [Int64: UInt64] = [:]
        /// The row file's bytes the records pointed at when last counted (nil: not yet this run).
        var live: Int64?
    }

    /// How often the copy catches up without being woken (rows prepared, previews kept).
    static let interval: Duration = .seconds(1)
    /// Rows read at a time.
    static let batch = 1000

    private func keep(_ copy: NodeCopy, for store: PostgresFeedStore, state: inout State) {
        var pause: Duration = .milliseconds(250)
        while !stopped {
            do throws(PQProblem) {
                let connection = try PQConnection(
                    store.location.libpqParameters(application: "warmfeed-copy"), deadline: .now + store.location.connectTimeout)
                defer { connection.close() }
                pause = .milliseconds(250)
                var last = ContinuousClock.now - Self.interval
                while !stopped {
                    let behind = copy.index.header().map { $0.writes < Int64(store.revision) } ?? true
                    if behind || last.duration(to: .now) >= Self.interval {
                        last = .now
                        try catchUp(copy, for: store, on: connection, state: &state)
                    } else {
                        Thread.sleep(forTimeInterval: 0.02)
                    }
                }
            } catch {
                if stopped { break }
                copy.noteKept { $0.problem = "\(error)" }
            }
            let until = ContinuousClock.now + pause
            while !stopped, ContinuousClock.now < until { Thread.sleep(forTimeInterval: 0.02) }
            pause = min(pause * 2, .seconds(1))
        }
    }

    /// One catch-up, in one snapshot.
    func catchUp(_ copy: NodeCopy, for store: PostgresFeedStore, on connection: PQConnection, state: inout State) throws(PQProblem) {
        let deadline = ContinuousClock.now + BlockingSession.statementLimit
        try connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", until: deadline)
        do throws(PQProblem) {
            try catchUpInSnapshot(copy, for: store, on: connection, state: &state, until: deadline)
            try connection.query("COMMIT", until: deadline)
        } catch {
            if connection.isOpen { _ = try? connection.query("ROLLBACK", until: .now + store.location.connectTimeout) }
            throw error
        }
    }

    private func catchUpInSnapshot(
        _ copy: NodeCopy, for store: PostgresFeedStore, on connection: PQConnection, state: inout State, until deadline: ContinuousClock.Instant
    ) throws(PQProblem) {
        let feed = try connection.query(
            "SELECT pg_snapshot_xmin(pg_current_snapshot()), writes, epoch, (SELECT COALESCE(MAX(seq), 0) FROM item) FROM feed WHERE id = 1",
            until: deadline)
        guard let xmin = feed.int64(0, 0), let writes = feed.int64(0, 1), let epoch = feed.int64(0, 2), let count = feed.int64(0, 3) else {
            throw PQProblem("the feed row is missing")
        }
        let index = copy.index
        let header = index.header()
        let rowsSize = index.rows.size
        // Rows prepared again leave their old bytes behind: past twice the
        // bytes the records point at (plus 64 MiB), the file is made again.
        var tooBig = false
        if rowsSize > 2 * (state.live ?? 0) + slack {
            state.live = index.liveRowBytes()
            tooBig = state.live.map { rowsSize > 2 * $0 + slack } ?? false
        }
        let ours = Int64(UInt32(truncatingIfNeeded: epoch))
        let whole =
            (header.map { !$0.isSettled || $0.origin != ours || $0.writes > writes || $0.stamp == 0 || !index.isWhole($0) } ?? true)
            || tooBig
        var started: PageIndex.Header?
        func begin() throws(PQProblem) -> PageIndex.Header {
            if let started { return started }
            do {
                var header = try index.begin()
                if whole {
                    try index.truncate()
                    try index.rows.truncate()
                    state.copied.removeAll()
                }
                header.origin = ours
                started = header
                return header
            } catch {
                throw PQProblem("cannot write the node's copy: \(error)")
            }
        }
        if whole { _ = try begin() }
        let horizon = whole ? nil : header?.stamp
        var after: Int64 = 0
        var copied = 0
        while true {
            if stopped { throw PQProblem("the node is stopping") }
            let rows: PQRows
            if let horizon {
                rows = try connection.query(
                    """
                    SELECT id, published, seq, preview, prepared, image_url IS NOT NULL, changed FROM item
                    WHERE changed >= $1::text::xid8 AND seq > $2 ORDER BY seq LIMIT \(Self.batch)
                    """, [.text(String(UInt64(bitPattern: horizon))), .int64(after)], until: deadline)
            } else {
                rows = try connection.query(
                    """
                    SELECT id, published, seq, preview, prepared, image_url IS NOT NULL, changed FROM item
                    WHERE seq > $1 ORDER BY seq LIMIT \(Self.batch)
                    """, [.int64(after)], until: deadline)
            }
            guard rows.count > 0 else { break }
            let horizonNow = UInt64(bitPattern: xmin)
            var records: [RowLog.Record] = []
            var places: [(place: PageIndex.Place, record: Int?)] = []
            for row in 0..<rows.count {
                guard let id = rows.int64(row, 0), let published = rows.int64(row, 1), let seq = rows.int64(row, 2), seq >= 1 else { continue }
                after = max(after, seq)
                let changed = UInt64(bitPattern: rows.int64(row, 6) ?? 0)
                if state.copied[id] == changed { continue }
                // Only a row at or past the new horizon can be read again.
                if changed >= horizonNow { state.copied[id] = changed }
                var record: Int?
                if let prepared = rows.bytes(row, 4) {
                    record = records.count
                    records.append(RowLog.Record(id: id, hasPicture: rows.bool(row, 5) ?? false, prepared: Array(prepared)))
                }
                places.append((PageIndex.Place(id: id, published: published, seq: seq, preview: rows.int64(row, 3), at: nil, size: 0), record))
            }
            guard !places.isEmpty else { continue }
            _ = try begin()
            do {
                let spots = try index.rows.append(records)
                var recorder = index.records()
                for (place, record) in places {
                    let spot = record.map { spots[$0] }
                    try recorder.add(
                        PageIndex.Place(
                            id: place.id, published: place.published, seq: place.seq, preview: place.preview, at: spot?.at,
                            size: Int(spot?.size ?? 0)))
                }
                try recorder.flush()
            } catch {
                throw PQProblem("cannot write the node's copy: \(error)")
            }
            copied += places.count
        }
        guard var header = started ?? header else { return }
        if started == nil {
            // Nothing copied: the horizon stays where it is (the rows past it
            // are known), unless the feed's count or writes moved on.
            guard header.writes != writes || header.count != count else { return }
            do { header = try index.begin() } catch { throw PQProblem("cannot write the node's copy: \(error)") }
        }
        header.count = count
        header.stamp = xmin
        header.writes = writes
        do { try index.finish(header) } catch { throw PQProblem("cannot write the node's copy: \(error)") }
        // Rows copied before the new horizon are never read again.
        let newHorizon = UInt64(bitPattern: xmin)
        state.copied = state.copied.filter { $0.value >= newHorizon }
        if whole { state.live = index.rows.size }
        copy.noteKept {
            $0.writes = Int(writes)
            $0.catchUps += 1
            $0.rowsCopied += copied
            if whole { $0.rebuilds += 1 }
            $0.problem = nil
        }
    }
}
