import PostgresWire
import WarmfeedCore

extension PostgresFeedStore {
    /// Runs `body` in one transaction on a connection of its own: every item
    /// it writes lands, or (when it throws, or PostgreSQL goes away) none does.
    /// Writes from several nodes take one advisory lock, so they run one after
    /// the other and never race on a guid. Blocks the calling thread (the
    /// importer's own) on each batch; readers keep reading the previous state.
    public func write<Result>(_ body: (inout FeedWriter) throws -> Result) throws -> (Result, UpsertSummary) {
        let connection: PQConnection
        do {
            connection = try PQConnection(location.libpqParameters(application: "warmfeed-write"), deadline: .now + location.connectTimeout)
        } catch {
            throw StoreUnavailable(PostgresProblem.explain(error, location))
        }
        defer { connection.close() }
        let session = BlockingSession(connection: connection)
        do {
            try session.run("BEGIN")
            try session.run("SELECT pg_advisory_xact_lock($1)", [.int64(PostgresSchema.writeLock)])
            let sink = try PostgresItemSink(session: session)
            var writer = FeedWriter(sink: sink)
            let result = try body(&writer)
            _ = consume writer
            let (summary, count) = try sink.finish()
            try session.run("COMMIT")
            if let count { heard(writes: count) }
            return (result, summary)
        } catch {
            if connection.isOpen { _ = try? connection.query("ROLLBACK", until: .now + location.connectTimeout) }
            if let problem = error as? PQProblem, !problem.isQueryError {
                throw StoreUnavailable(PostgresProblem.explain(problem, location, waited: BlockingSession.statementLimit))
            }
            throw error
        }
    }
}

/// One connection used from one thread, each statement waited for: the
/// write path's, whose items come from a synchronous parser.
struct BlockingSession {
    let connection: PQConnection
    /// The longest one statement of a write may take (renumbering a million
    /// rows' ranks takes seconds; a server that stopped answering, forever).
    static let statementLimit: Duration = .seconds(600)

    /// Runs `sql` with `parameters` and returns its rows.
    @discardableResult
    func run(_ sql: String, _ parameters: [PQValue] = []) throws(PQProblem) -> PQRows {
        try connection.query(sql, parameters, until: .now + Self.statementLimit)
    }
}

/// The PostgreSQL side of a `FeedWriter`: items gathered in batches of up to
/// 500, each batch read (one query for the guids it names), compared and
/// written (one multi-row INSERT, one multi-row UPDATE), with the same rules
/// and the same summary as the SQLite sink.
final class PostgresItemSink: FeedItemSink {
    private let session: BlockingSession
    /// The highest id before this write began: a row above it was inserted by this write.
    private let idsBefore: Int64
    /// The oldest (published, id) the write touched: ranks from there up are renumbered.
    private var lowest: (published: Int64, id: Int64)?
    private var pending: [(item: FeedItem, keepStoredDate: Bool)] = []
    private var pendingGuids: Set<String> = []
    /// The source of the items pending: a batch holds one source's items.
    private var pendingSource: Int64 = 0
    private var copies: [FeedItem] = []
    private var adoptedEpoch: UInt32?
    private var copiedAny = false
    private(set) var summary = UpsertSummary()
    static let batch = 500

    init(session: BlockingSession) throws {
        self.session = session
        idsBefore = try session.run("SELECT COALESCE(MAX(id), 0) FROM item").int64(0, 0) ?? 0
    }

    func upsert(_ item: FeedItem, keepStoredDate: Bool) throws {
        // A guid twice in one batch: the first must be written before the second is compared with it.
        if pendingGuids.contains(item.guid) || (item.source != pendingSource && !pending.isEmpty) { try flush() }
        pendingSource = item.source
        pending.append((item, keepStoredDate))
        pendingGuids.insert(item.guid)
        if pending.count >= Self.batch { try flush() }
    }

    func insertCopy(_ item: FeedItem) throws {
        copies.append(item)
        if copies.count >= Self.batch { try flushCopies() }
    }

    func adoptEpoch(_ epoch: UInt32) throws {
        adoptedEpoch = epoch
    }

    func settle() throws {
        try flush()
    }

    private func flush() throws {
        guard !pending.isEmpty else { return }
        defer {
            pending.removeAll(keepingCapacity: true)
            pendingGuids.removeAll(keepingCapacity: true)
        }
        var existing: [String: FeedItem] = [:]
        let guids = pending.map(\.item.guid)
        let rows = try session.run(
            "SELECT \(PostgresFeedStore.columns) FROM item WHERE guid = ANY($1) AND source = $2", [.texts(guids), .int64(pendingSource)])
        for row in 0..<rows.count {
            let item = try PostgresFeedStore.item(rows, row)
            existing[item.guid] = item
        }
        var inserts: [FeedItem] = []
        var updates: [FeedItem] = []
        for (incoming, keepStoredDate) in pending {
            guard let stored = existing[incoming.guid] else {
                inserts.append(incoming)
                summary.inserted += 1
                continue
            }
            let item = incoming.replacing(stored, keepStoredDate: keepStoredDate)
            let earlier = (stored.id ?? 0) <= idsBefore
            if !earlier { summary.repeated += 1 }
            if item == stored {
                if earlier { summary.unchanged += 1 }
                continue
            }
            updates.append(item)
            if earlier { summary.updated += 1 }
            if item.published != stored.published { touch(min(item.published, stored.published), stored.id ?? 0) }
        }
        if !inserts.isEmpty {
            let values = ItemColumn.values(
                inserts, [.guid, .title, .summary, .link, .imageURL, .imageWidth, .imageHeight, .published, .source, .sourceTitle, .sourceLink])
            let sql = "INSERT INTO item (\(values.names)) VALUES \(values.rows) RETURNING id, published"
            let rows = try session.run(sql, values.binds)
            for row in 0..<rows.count {
                guard let id = rows.int64(row, 0), let published = rows.int64(row, 1) else { continue }
                touch(published, id)
            }
        }
        if !updates.isEmpty {
            let values = ItemColumn.values(
                updates, [.id, .guid, .title, .summary, .link, .imageURL, .imageWidth, .imageHeight, .published, .preview, .sourceTitle, .sourceLink])
            let sql = """
                UPDATE item SET guid = u.guid, title = u.title, summary = u.summary, link = u.link, image_url = u.image_url,
                    image_width = u.image_width, image_height = u.image_height, published = u.published, preview = u.preview,
                    source_title = u.source_title, source_link = u.source_link, prepared = NULL
                FROM (VALUES \(values.rows)) AS u(\(values.names))
                WHERE item.id = u.id
                """
            try session.run(sql, values.binds)
        }
    }

    /// Items copied from another store, with their ids, ranks and previews.
    private func flushCopies() throws {
        guard !copies.isEmpty else { return }
        defer { copies.removeAll(keepingCapacity: true) }
        copiedAny = true
        summary.inserted += copies.count
        let values = ItemColumn.values(copies, ItemColumn.allCases)
        let sql = "INSERT INTO item (\(values.names)) OVERRIDING SYSTEM VALUE VALUES \(values.rows)"
        try session.run(sql, values.binds)
    }

    func source(key: String) throws -> Int64 {
        let rows = try session.run(
            """
            INSERT INTO source (key) VALUES ($1) ON CONFLICT (key) DO UPDATE SET key = excluded.key RETURNING id
            """, [.text(key)])
        guard let id = rows.int64(0, 0) else { throw PQProblem("no id for the source \(key)") }
        return id
    }

    func keepSource(_ id: Int64, state: String) throws {
        try session.run("UPDATE source SET state = $2 WHERE id = $1", [.int64(id), .text(state)])
    }

    func removeSource(_ id: Int64) throws {
        try flush()
        // Ranks above the oldest item removed are made dense again by `finish`,
        // which updates every row whose rank moves: a node's copy follows.
        let rows = try session.run("DELETE FROM item WHERE source = $1 RETURNING published, id", [.int64(id)])
        for row in 0..<rows.count {
            guard let published = rows.int64(row, 0), let id = rows.int64(row, 1) else { continue }
            touch(published, id)
        }
        summary.removed += rows.count
        try session.run("DELETE FROM source WHERE id = $1", [.int64(id)])
    }

    func relabelSource(_ id: Int64, title: String?, link: String?, adoptingUnsourced: Bool) throws {
        try flush()
        if adoptingUnsourced { try session.run("UPDATE item SET source = $1 WHERE source = 0", [.int64(id)]) }
        let rows = try session.run(
            """
            UPDATE item SET source_title = $2, source_link = $3, prepared = NULL
            WHERE source = $1 AND (source_title IS DISTINCT FROM $2 OR source_link IS DISTINCT FROM $3) RETURNING id
            """, [.int64(id), .text(title), .text(link)])
        summary.relabelled += rows.count
    }

    func insertSourceCopy(_ entry: SourceEntry) throws {
        try session.run(
            "INSERT INTO source (id, key, state) OVERRIDING SYSTEM VALUE VALUES ($1, $2, $3)", [.int64(entry.id), .text(entry.key), .text(entry.state)])
        try session.run("SELECT setval(pg_get_serial_sequence('source', 'id'), GREATEST((SELECT MAX(id) FROM source), 1))")
    }

    private func touch(_ published: Int64, _ id: Int64) {
        if let current = lowest, (current.published, current.id) <= (published, id) { return }
        lowest = (published, id)
    }

    /// Writes what is left, makes `seq` dense again from the oldest item
    /// touched, counts the write and announces it (NOTIFY is delivered at
    /// commit). Returns the summary and the new write count (nil: nothing changed).
    func finish() throws -> (UpsertSummary, Int?) {
        try flush()
        try flushCopies()
        if copiedAny {
            // Copies bring their own ids: the identity continues after the highest.
            try session.run("SELECT setval(pg_get_serial_sequence('item', 'id'), GREATEST((SELECT MAX(id) FROM item), 1))")
        }
        if let adoptedEpoch {
            try session.run("UPDATE feed SET epoch = $1 WHERE id = 1", [.int64(Int64(adoptedEpoch))])
        }
        if let start = lowest {
            let base =
                try session.run(
                    """
                    SELECT seq FROM item WHERE (published, id) < ($1, $2) ORDER BY published DESC, id DESC LIMIT 1
                    """, [.int64(start.published), .int64(start.id)]
                ).int64(0, 0) ?? 0
            try session.run(
                """
                UPDATE item SET seq = ranked.rank FROM (
                    SELECT id, $1::bigint + ROW_NUMBER() OVER (ORDER BY published, id) AS rank
                    FROM item WHERE (published, id) >= ($2, $3)
                ) AS ranked
                WHERE item.id = ranked.id AND item.seq IS DISTINCT FROM ranked.rank
                """, [.int64(base), .int64(start.published), .int64(start.id)])
        }
        guard summary.changedItems else { return (summary, nil) }
        let count = try session.run("UPDATE feed SET writes = writes + 1 WHERE id = 1 RETURNING writes").int64(0, 0) ?? 0
        try session.run("SELECT pg_notify($1, $2)", [.text(PostgresSchema.revisionChannel), .text(String(count))])
        return (summary, Int(count))
    }
}

/// The item table's columns, for statements that write many rows at once.
enum ItemColumn: CaseIterable {
    case id, guid, title, summary, link, imageURL, imageWidth, imageHeight, published, seq, preview, source, sourceTitle, sourceLink

    var name: String {
        switch self {
        case .imageURL: "image_url"
        case .imageWidth: "image_width"
        case .imageHeight: "image_height"
        case .sourceTitle: "source_title"
        case .sourceLink: "source_link"
        default: "\(self)"
        }
    }

    /// The column's type, cast on each parameter so NULLs in a VALUES list have one.
    var type: String {
        switch self {
        case .guid, .title, .summary, .link, .imageURL, .sourceTitle, .sourceLink: "text"
        default: "bigint"
        }
    }

    func value(of item: FeedItem) -> PQValue {
        switch self {
        case .id: .int64(item.id ?? 0)
        case .guid: .text(item.guid)
        case .title: .text(item.title)
        case .summary: .text(item.summary)
        case .link: .text(item.link)
        case .imageURL: .text(item.imageURL)
        case .imageWidth: .int64(item.imageWidth.map(Int64.init))
        case .imageHeight: .int64(item.imageHeight.map(Int64.init))
        case .published: .int64(item.published)
        case .seq: .int64(item.seq)
        case .preview: .int64(item.preview)
        case .source: .int64(item.source)
        case .sourceTitle: .text(item.sourceTitle)
        case .sourceLink: .text(item.sourceLink)
        }
    }

    /// `items` as a VALUES list of `columns`: the column names, the rows of
    /// typed parameters ("($1::text, $2::bigint), …") and their values.
    static func values(_ items: [FeedItem], _ columns: [ItemColumn]) -> (names: String, rows: String, binds: [PQValue]) {
        var binds: [PQValue] = []
        binds.reserveCapacity(items.count * columns.count)
        var rows: [String] = []
        rows.reserveCapacity(items.count)
        for item in items {
            let at = binds.count
            rows.append("(" + columns.enumerated().map { "$\(at + $0.offset + 1)::\($0.element.type)" }.joined(separator: ", ") + ")")
            for column in columns { binds.append(column.value(of: item)) }
        }
        return (columns.map(\.name).joined(separator: ", "), rows.joined(separator: ", "), binds)
    }
}
