import GRDBSQLite
import Synchronization
import ThreadSlots
import WarmfeedCore

/// Pages read straight from SQLite's C API, on read connections of their own.
///
/// A page is the one query on every cold request. Through GRDB's pool, each
/// read checked a connection out behind a dispatch barrier and ran on that
/// connection's serial queue: two `DispatchQueue.sync` hops, and the thread
/// handoffs and futex waits behind them were a quarter of the server's CPU
/// under random deep pages (perf, `bench/pages.sh DEEP=1`). Here a read runs
/// prepared statements on the caller's thread, on that thread's own
/// connection: each thread that reads has one (`ThreadSlot`), behind a lock of
/// its own that only a thread sharing its slot could ever take, so no read
/// waits on another thread's (an idle list under one mutex was the lock every
/// deep page took twice). Writes, migrations and the rest stay on GRDB.
final class SQLitePageReader: Sendable {
    private let path: String
    /// Connections by thread slot (threads past the last slot share by remainder), opened on first use.
    private let connections: [Slot]

    private final class Slot: Sendable {
        let connection = Mutex<ReadConnection?>(nil)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init(path: String, slots: Int = 256) {
        self.path = path
        connections = (0..<max(1, slots)).map { _ in Slot() }
    }

    /// Runs `body` on this thread's read connection (opened on its first
    /// read), inside one read transaction.
    func read<Result>(_ body: (ReadConnection) throws -> Result) throws -> Result {
        try connections[ThreadSlot.current % connections.count].connection.withLock { slot in
            let connection = try slot ?? ReadConnection(path: path)
            slot = connection
            try connection.execute(connection.begin)
            defer { try? connection.execute(connection.commit) }
            return try body(connection)
        }
    }
}

extension SQLiteFeedStore {
    /// The bytes SQLite holds in this process (page caches of every connection, statements, schema).
    public static var memoryInUse: Int { Int(sqlite3_memory_used()) }
}

/// One read-only SQLite connection with the page queries prepared once.
/// Used by one thread at a time (`SQLitePageReader` keeps one per thread, under its lock).
final class ReadConnection: @unchecked Sendable {
    // @unchecked Sendable: only the thread that took it from the reader's list uses it.
    private let handle: OpaquePointer
    fileprivate let begin: OpaquePointer
    fileprivate let commit: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]

    init(path: String) throws {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
        guard sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            throw SQLitePageReader.Failure(description: "cannot open \(path) for reading: \(message)")
        }
        self.handle = handle
        sqlite3_busy_timeout(handle, 5000)
        // A page cache of 1 MiB (SQLite's default is 2 MB a connection): a page is a
        // range of a few leaf pages, and the system's page cache holds the file anyway.
        sqlite3_exec(handle, "PRAGMA cache_size = -1024", nil, nil, nil)
        func prepare(_ sql: String) throws -> OpaquePointer {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK, let statement else {
                throw SQLitePageReader.Failure(description: "cannot prepare \(sql): \(String(cString: sqlite3_errmsg(handle)))")
            }
            return statement
        }
        do {
            begin = try prepare("BEGIN DEFERRED")
            commit = try prepare("COMMIT")
        } catch {
            sqlite3_close_v2(handle)
            throw error
        }
    }

    deinit {
        sqlite3_finalize(begin)
        sqlite3_finalize(commit)
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    fileprivate func execute(_ statement: OpaquePointer) throws {
        defer { sqlite3_reset(statement) }
        guard sqlite3_step(statement) == SQLITE_DONE else { throw failure() }
    }

    private func failure() -> SQLitePageReader.Failure {
        SQLitePageReader.Failure(description: String(cString: sqlite3_errmsg(handle)))
    }

    /// Runs `sql` (prepared once per connection) with integer `arguments`,
    /// handing each row to `row`; the statement is reset after.
    func query(_ sql: String, _ arguments: [Int64], row: (OpaquePointer) -> Void) throws {
        let statement: OpaquePointer
        if let prepared = statements[sql] {
            statement = prepared
        } else {
            var prepared: OpaquePointer?
            guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil) == SQLITE_OK, let prepared else {
                throw failure()
            }
            statements[sql] = prepared
            statement = prepared
        }
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, value) in arguments.enumerated() { sqlite3_bind_int64(statement, Int32(index + 1), value) }
        while true {
            switch sqlite3_step(statement) {
            case SQLITE_ROW: row(statement)
            case SQLITE_DONE: return
            default: throw failure()
            }
        }
    }
}

extension OpaquePointer {
    /// Column `index` of the current row as text; nil for NULL.
    func columnText(_ index: Int32) -> String? {
        guard let bytes = sqlite3_column_text(self, index) else { return nil }
        let count = Int(sqlite3_column_bytes(self, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// Column `index` of the current row as bytes, valid until the statement
    /// steps again; nil for NULL.
    func columnBytes(_ index: Int32) -> UnsafeRawBufferPointer? {
        guard sqlite3_column_type(self, index) != SQLITE_NULL else { return nil }
        let bytes = sqlite3_column_blob(self, index)
        let count = Int(sqlite3_column_bytes(self, index))
        return UnsafeRawBufferPointer(start: bytes, count: count)
    }

    /// Whether column `index` of the current row is NULL.
    func isNull(_ index: Int32) -> Bool { sqlite3_column_type(self, index) == SQLITE_NULL }

    /// Column `index` of the current row as an integer; nil for NULL.
    func columnInteger(_ index: Int32) -> Int64? {
        sqlite3_column_type(self, index) == SQLITE_NULL ? nil : sqlite3_column_int64(self, index)
    }
}
