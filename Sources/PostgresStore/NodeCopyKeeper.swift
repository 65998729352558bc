import Foundation
import PageFiles
import PostgresWire
import Synchronization

/// Keeps a `NodeCopy` current from PostgreSQL, on a thread and a connection
/// of its own, from its start until `stop()`.
///
/// A catch-up reads, in one repeatable-read transaction (one snapshot), the
/// feed's write count and size and every item written by a transaction the
/// last catch-up's snapshot did not see: one at or past its `xmax`, or one of
/// those it saw running (`item.changed` is the id of the transaction that
/// last wrote the item, set by a trigger). So a write that commits after a
/// later one is still found, and no row is read twice. After a restart the
/// first catch-up starts from the oldest transaction running at the last one
/// (its `xmin`, kept in the header's stamp): a few rows may be copied again,
/// none missed. Each row's prepared bytes are appended to the row file and
/// its record written at its rank, between the index's `begin` and `finish`
/// (readers meanwhile ask PostgreSQL). Every rank a write moved belongs to a
/// row the write changed, so after a catch-up every record up to the count
/// is the snapshot's.
///
/// The copy is rebuilt from nothing when its files are missing, cut or of
/// another store (epoch), and when the row file has grown past twice the
/// bytes its records point at plus 64 MiB (rows prepared again leave their
/// old bytes behind; the records are summed only when the file passes that
/// mark). While PostgreSQL is away it reconnects, as the listener does.
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
        /// What the last catch-up's snapshot saw: transactions from `xmax` on,
        /// and those in `running`, were not done (nil: none this run).
        var seen: (xmax: UInt64, running: [String])?
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
            """
            SELECT pg_snapshot_xmin(s), pg_snapshot_xmax(s), COALESCE((SELECT string_agg(x::text, ',') FROM pg_snapshot_xip(s) AS x), ''),
                writes, epoch, (SELECT COALESCE(MAX(seq), 0) FROM item)
            FROM feed, pg_current_snapshot() AS s WHERE id = 1
            """, until: deadline)
        guard let xmin = feed.int64(0, 0), let xmax = feed.int64(0, 1), let running = feed.string(0, 2),
            let writes = feed.int64(0, 3), let epoch = feed.int64(0, 4), let count = feed.int64(0, 5)
        else {
            throw PQProblem("the feed row is missing")
        }
        let snapshot = (xmax: UInt64(bitPattern: xmax), running: running.split(separator: ",").map(String.init))
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
                }
                header.origin = ours
                started = header
                return header
            } catch {
                throw PQProblem("cannot write the node's copy: \(error)")
            }
        }
        if whole { _ = try begin() }
        var after: Int64 = 0
        var copied = 0
        while true {
            if stopped { throw PQProblem("the node is stopping") }
            let columns = "id, published, seq, preview, prepared, image_url IS NOT NULL"
            let rows: PQRows
            if whole {
                rows = try connection.query(
                    "SELECT \(columns) FROM item WHERE seq > $1 ORDER BY seq LIMIT \(Self.batch)", [.int64(after)], until: deadline)
            } else if let seen = state.seen {
                rows = try connection.query(
                    """
                    SELECT \(columns) FROM item
                    WHERE (changed >= $1::text::xid8 OR changed = ANY($2::text[]::xid8[])) AND seq > $3 ORDER BY seq LIMIT \(Self.batch)
                    """, [.text(String(seen.xmax)), .texts(seen.running), .int64(after)], until: deadline)
            } else {
                let since = UInt64(bitPattern: header?.stamp ?? 0)
                rows = try connection.query(
                    "SELECT \(columns) FROM item WHERE changed >= $1::text::xid8 AND seq > $2 ORDER BY seq LIMIT \(Self.batch)",
                    [.text(String(since)), .int64(after)], until: deadline)
            }
            guard rows.count > 0 else { break }
            var records: [RowLog.Record] = []
            var places: [(place: PageIndex.Place, record: Int?)] = []
            for row in 0..<rows.count {
                guard let id = rows.int64(row, 0), let published = rows.int64(row, 1), let seq = rows.int64(row, 2), seq >= 1 else { continue }
                after = max(after, seq)
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
        state.seen = snapshot
        guard var header = started ?? header else { return }
        if started == nil {
            // Nothing copied: the header stays (its stamp only says where a
            // restart begins), unless the feed's count or writes moved on.
            guard header.writes != writes || header.count != count else { return }
            do { header = try index.begin() } catch { throw PQProblem("cannot write the node's copy: \(error)") }
        }
        header.count = count
        header.stamp = xmin
        header.writes = writes
        do { try index.finish(header) } catch { throw PQProblem("cannot write the node's copy: \(error)") }
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
