import Logging
import PostgresNIO
import WarmfeedCore

extension PostgresFeedStore {
    /// Runs `body` in one transaction on a connection of its own: every item
    /// it writes lands, or (when it throws, or PostgreSQL goes away) none does.
    /// Writes from several nodes take one advisory lock, so they run one after
    /// the other and never race on a guid. Blocks the calling thread (the
    /// importer's own) on each batch; readers keep reading the previous state.
    public func write<Result>(_ body: (inout FeedWriter) throws -> Result) throws -> (Result, UpsertSummary) {
        let connection: PostgresConnection
        do {
            connection = try PostgresConnection.connect(
                on: PostgresConnection.defaultEventLoopGroup.any(), configuration: try location.connectionConfiguration, id: 3, logger: logger
            ).wait()
        } catch {
            throw StoreUnavailable(PostgresProblem.explain(error, location))
        }
        defer { _ = try? connection.close().wait() }
        let session = BlockingSession(connection: connection, logger: logger)
        do {
            try session.run("BEGIN")
            try session.run("SELECT pg_advisory_xact_lock(\(PostgresSchema.writeLock))")
            let sink = try PostgresItemSink(session: session)
            var writer = FeedWriter(sink: sink)
            let result = try body(&writer)
            _ = consume writer
            let (summary, count) = try sink.finish()
            try session.run("COMMIT")
            if let count { heard(writes: count) }
            return (result, summary)
        } catch {
            _ = try? session.run("ROLLBACK")
            if let psql = error as? PSQLError, psql.serverInfo == nil { throw StoreUnavailable(PostgresProblem.explain(error, location)) }
            throw error
        }
    }
}

/// One connection used from one thread, each query waited for: the write
/// path's, whose items come from a synchronous parser.
struct BlockingSession {
    let connection: PostgresConnection
    let logger: Logger

    /// Runs `query` and returns its rows.
    @discardableResult
    func run(_ query: PostgresQuery) throws -> [PostgresRow] {
        try connection.query(query, logger: logger).wait().rows
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
    private var copies: [FeedItem] = []
    private var adoptedEpoch: UInt32?
    private var copiedAny = false
    private(set) var summary = UpsertSummary()
    static let batch = 500

    init(session: BlockingSession) throws {
        self.session = session
        idsBefore = try session.run("SELECT COALESCE(MAX(id), 0) FROM item").first?.decode(Int64.self) ?? 0
    }

    func upsert(_ item: FeedItem, keepStoredDate: Bool) throws {
        // A guid twice in one batch: the first must be written before the second is compared with it.
        if pendingGuids.contains(item.guid) { try flush() }
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

    private func flush() throws {
        guard !pending.isEmpty else { return }
        defer {
            pending.removeAll(keepingCapacity: true)
            pendingGuids.removeAll(keepingCapacity: true)
        }
        var existing: [String: FeedItem] = [:]
        let guids = pending.map(\.item.guid)
        for row in try session.run("SELECT \(unescaped: PostgresFeedStore.columns), 0::bigint FROM item WHERE guid = ANY(\(guids)::text[])") {
            let (item, _) = try PostgresFeedStore.item(row)
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
            let values = ItemColumn.values(inserts, [.guid, .title, .summary, .link, .imageURL, .imageWidth, .imageHeight, .published])
            let sql = "INSERT INTO item (\(values.names)) VALUES \(values.rows) RETURNING id, published"
            for row in try session.run(PostgresQuery(unsafeSQL: sql, binds: values.binds)) {
                let (id, published) = try row.decode((Int64, Int64).self)
                touch(published, id)
            }
        }
        if !updates.isEmpty {
            let values = ItemColumn.values(updates, [.id, .guid, .title, .summary, .link, .imageURL, .imageWidth, .imageHeight, .published, .preview])
            let sql = """
                UPDATE item SET guid = u.guid, title = u.title, summary = u.summary, link = u.link, image_url = u.image_url,
                    image_width = u.image_width, image_height = u.image_height, published = u.published, preview = u.preview,
                    prepared = NULL
                FROM (VALUES \(values.rows)) AS u(\(values.names))
                WHERE item.id = u.id
                """
            try session.run(PostgresQuery(unsafeSQL: sql, binds: values.binds))
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
        try session.run(PostgresQuery(unsafeSQL: sql, binds: values.binds))
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
            try session.run("UPDATE feed SET epoch = \(Int64(adoptedEpoch)) WHERE id = 1")
        }
        if let start = lowest {
            let base = try session.run("""
                SELECT seq FROM item WHERE (published, id) < (\(start.published), \(start.id)) ORDER BY published DESC, id DESC LIMIT 1
                """).first?.decode(Int64?.self) ?? 0
            try session.run("""
                UPDATE item SET seq = ranked.rank FROM (
                    SELECT id, \(base)::bigint + ROW_NUMBER() OVER (ORDER BY published, id) AS rank
                    FROM item WHERE (published, id) >= (\(start.published), \(start.id))
                ) AS ranked
                WHERE item.id = ranked.id AND item.seq IS DISTINCT FROM ranked.rank
                """)
        }
        guard summary.inserted + summary.updated > 0 else { return (summary, nil) }
        let count = try session.run("UPDATE feed SET writes = writes + 1 WHERE id = 1 RETURNING writes").first?.decode(Int64.self) ?? 0
        try session.run("SELECT pg_notify(\(PostgresSchema.revisionChannel), \(String(count)))")
        return (summary, Int(count))
    }
}

/// The item table's columns, for statements that write many rows at once.
enum ItemColumn: CaseIterable {
    case id, guid, title, summary, link, imageURL, imageWidth, imageHeight, published, seq, preview

    var name: String {
        switch self {
        case .imageURL: "image_url"
        case .imageWidth: "image_width"
        case .imageHeight: "image_height"
        default: "\(self)"
        }
    }

    /// The column's type, cast on each parameter so NULLs in a VALUES list have one.
    var type: String {
        switch self {
        case .guid, .title, .summary, .link, .imageURL: "text"
        default: "bigint"
        }
    }

    func bind(_ item: FeedItem, into binds: inout PostgresBindings) {
        switch self {
        case .id: binds.append(item.id ?? 0)
        case .guid: binds.append(item.guid)
        case .title: binds.append(item.title)
        case .summary: binds.append(item.summary)
        case .link: binds.append(item.link)
        case .imageURL: binds.append(item.imageURL)
        case .imageWidth: binds.append(item.imageWidth.map(Int64.init))
        case .imageHeight: binds.append(item.imageHeight.map(Int64.init))
        case .published: binds.append(item.published)
        case .seq: binds.append(item.seq)
        case .preview: binds.append(item.preview)
        }
    }

    /// `items` as a VALUES list of `columns`: the column names, the rows of
    /// typed parameters ("($1::text, $2::bigint), …") and their values.
    static func values(_ items: [FeedItem], _ columns: [ItemColumn]) -> (names: String, rows: String, binds: PostgresBindings) {
        var binds = PostgresBindings(capacity: items.count * columns.count)
        var rows: [String] = []
        rows.reserveCapacity(items.count)
        for item in items {
            let at = binds.count
            rows.append("(" + columns.enumerated().map { "$\(at + $0.offset + 1)::\($0.element.type)" }.joined(separator: ", ") + ")")
            for column in columns { column.bind(item, into: &binds) }
        }
        return (columns.map(\.name).joined(separator: ", "), rows.joined(separator: ", "), binds)
    }
}
