import CLibPQ
#if canImport(Glibc)
import Glibc
import Reckoning
#endif

/// One blocking libpq connection, used by one thread at a time, where every
/// wait on the server (connecting, each answer, each notification) has a deadline.
///
/// It is for a thread that does short blocking work itself, as a store read
/// on a handler thread does: a query is one `send` and a `poll` on this
/// thread's own socket, with no other thread woken on the way, and its rows
/// are read in place from libpq's result in PostgreSQL's binary format.
/// (postgres-nio, which the store used before, answered on an event loop
/// thread, so each read was three thread hand-offs and a decode into Swift
/// values; on two cores that was most of a deep page's CPU.)
///
/// A connection that missed a deadline or lost its server is closed for good
/// (`isOpen` false): what it was doing is unknown, and its owner makes a new one.
public final class PQConnection {
    private var connection: OpaquePointer?
    private var prepared: Set<String> = []

    /// Connects with `parameters` (libpq's keywords: host, port, user,
    /// password, dbname, sslmode, application_name…), giving up at `deadline`.
    public init(_ parameters: [(String, String)], deadline: ContinuousClock.Instant) throws(PQProblem) {
        let keys: [UnsafePointer<CChar>?] = parameters.map { UnsafePointer(strdup($0.0)) } + [nil]
        let values: [UnsafePointer<CChar>?] = parameters.map { UnsafePointer(strdup($0.1)) } + [nil]
        defer {
            for pointer in keys + values { free(UnsafeMutablePointer(mutating: pointer)) }
        }
        let started = PQconnectStartParams(keys, values, 0)
        guard let started else { throw PQProblem("libpq could not start a connection (out of memory)") }
        connection = started
        wf_pq_ignore_notices(started)
        // Refused before a socket was made (a host name that does not resolve, say): no socket to poll.
        guard PQstatus(started) != CONNECTION_BAD, PQsocket(started) >= 0 else {
            let message = Self.message(started)
            close()
            throw PQProblem(message, connectionLost: true)
        }
        // The non-blocking handshake of libpq's manual (34.1): poll the socket
        // the way PQconnectPoll asks for, until it says OK or FAILED.
        var wanted = PGRES_POLLING_WRITING
        while true {
            switch wanted {
            case PGRES_POLLING_OK:
                // Queries from here on wait in `answer`, each with its own deadline.
                return
            case PGRES_POLLING_FAILED:
                let message = Self.message(started)
                close()
                throw PQProblem(message)
            default:
                try wait(forWriting: wanted == PGRES_POLLING_WRITING, until: deadline, doing: "connecting")
                wanted = PQconnectPoll(started)
            }
        }
    }

    deinit { close() }

    /// Whether the connection can still be used.
    public var isOpen: Bool { connection != nil }

    /// Closes the connection (it cannot be used again).
    public func close() {
        if let connection { PQfinish(connection) }
        connection = nil
    }

    /// Runs the statement `sql`, prepared once on this connection under
    /// `name`, with `parameters` as BIGINTs; its rows in binary form. A
    /// server's error is thrown with its SQLSTATE; a deadline missed or a
    /// connection lost closes the connection.
    public func execute(_ name: String, _ sql: String, _ parameters: [Int64], until deadline: ContinuousClock.Instant) throws(PQProblem) -> PQRows {
        guard let connection else { throw PQProblem("the connection is closed") }
        if !prepared.contains(name) {
            let types = [Oid](repeating: 20, count: parameters.count)  // int8
            guard PQsendPrepare(connection, name, sql, Int32(parameters.count), types) == 1 else { throw lost() }
            let result = try answer(until: deadline)
            defer { PQclear(result) }
            guard PQresultStatus(result) == PGRES_COMMAND_OK else { throw failure(result) }
            prepared.insert(name)
        }
        // Each parameter as 8 big-endian bytes, all in one buffer.
        var bytes = [UInt8](repeating: 0, count: parameters.count * 8)
        for (index, value) in parameters.enumerated() {
            withUnsafeBytes(of: value.bigEndian) { bytes.replaceSubrange(index * 8..<index * 8 + 8, with: $0) }
        }
        let lengths = [Int32](repeating: 8, count: parameters.count)
        let formats = [Int32](repeating: 1, count: parameters.count)
        let sent = bytes.withUnsafeBufferPointer { raw -> Int32 in
            let base = raw.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }
            let values: [UnsafePointer<CChar>?] = (0..<parameters.count).map { base! + $0 * 8 }
            return PQsendQueryPrepared(connection, name, Int32(parameters.count), values, lengths, formats, 1)
        }
        guard sent == 1 else { throw lost() }
        let result = try answer(until: deadline)
        guard PQresultStatus(result) == PGRES_TUPLES_OK else {
            defer { PQclear(result) }
            throw failure(result)
        }
        return PQRows(result)
    }

    /// Runs `sql` (one statement, `$1`… for `parameters`) as an unnamed
    /// statement; its rows, if any, in binary form. A server's error is
    /// thrown with its SQLSTATE; a deadline missed or a connection lost
    /// closes the connection. A deadline already past when the call begins
    /// fails it without closing the connection (nothing was sent).
    @discardableResult
    public func query(_ sql: String, _ parameters: [PQValue] = [], until deadline: ContinuousClock.Instant) throws(PQProblem) -> PQRows {
        guard let connection else { throw PQProblem("the connection is closed") }
        guard ContinuousClock.now < deadline else { throw PQProblem("no time left for the query", timedOut: true) }
        let encoded = parameters.map(\.encoded)
        var lengths: [Int32] = [], formats: [Int32] = [], types: [Oid] = []
        for parameter in encoded {
            types.append(parameter.type)
            lengths.append(Int32(parameter.bytes?.count ?? 0))
            formats.append(1)
        }
        let sent = withPointers(to: encoded.map(\.bytes)) { values in
            PQsendQueryParams(connection, sql, Int32(encoded.count), types, values, lengths, formats, 1)
        }
        guard sent == 1 else { throw lost() }
        let result = try answer(until: deadline)
        switch PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK:
            return PQRows(result)
        default:
            defer { PQclear(result) }
            throw failure(result)
        }
    }

    /// The notifications (`LISTEN`) that arrive by `deadline`: at once those
    /// already read, else the first that come; empty when none came in time
    /// (the connection stays open). A connection lost closes it.
    public func notifications(until deadline: ContinuousClock.Instant) throws(PQProblem) -> [PQNotification] {
        guard let connection else { throw PQProblem("the connection is closed") }
        var arrived = drainNotifications(connection)
        while arrived.isEmpty {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return [] }
            var descriptor = pollfd(fd: PQsocket(connection), events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Self.milliseconds(left))
            if ready < 0, errno != EINTR {
                let message = String(cString: strerror(errno))
                close()
                throw PQProblem("poll failed: \(message)", connectionLost: true)
            }
            guard ready > 0 else { continue }
            guard PQconsumeInput(connection) == 1 else { throw lost() }
            arrived = drainNotifications(connection)
            // Readable with nothing to read but the end of the stream: the server is gone.
            if arrived.isEmpty, PQstatus(connection) != CONNECTION_OK { throw lost() }
        }
        return arrived
    }

    private func drainNotifications(_ connection: OpaquePointer) -> [PQNotification] {
        var arrived: [PQNotification] = []
        while let notice = PQnotifies(connection) {
            arrived.append(PQNotification(channel: String(cString: notice.pointee.relname), payload: String(cString: notice.pointee.extra)))
            PQfreemem(notice)
        }
        return arrived
    }

    /// The one result of the command just sent, once the server is done with it.
    private func answer(until deadline: ContinuousClock.Instant) throws(PQProblem) -> OpaquePointer {
        guard let connection else { throw PQProblem("the connection is closed") }
        var first: OpaquePointer?
        while true {
            while PQisBusy(connection) == 1 {
                do {
                    try wait(forWriting: false, until: deadline, doing: "waiting for an answer")
                } catch {
                    if let first { PQclear(first) }
                    throw error
                }
                guard PQconsumeInput(connection) == 1 else {
                    if let first { PQclear(first) }
                    throw lost()
                }
            }
            guard let result = PQgetResult(connection) else { break }
            if first == nil { first = result } else { PQclear(result) }
        }
        guard let first else { throw lost() }
        return first
    }

    /// Waits until the socket is ready, or throws (closing the connection) at `deadline`.
    private func wait(forWriting: Bool, until deadline: ContinuousClock.Instant, doing what: String) throws(PQProblem) {
        guard let connection else { throw PQProblem("the connection is closed") }
        var descriptor = pollfd(fd: PQsocket(connection), events: Int16(forWriting ? POLLOUT : POLLIN), revents: 0)
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else {
                close()
                throw PQProblem("no answer within the deadline (\(what))", timedOut: true)
            }
            let ready = poll(&descriptor, 1, Self.milliseconds(left))
            if ready > 0 { return }
            if ready < 0, errno != EINTR {
                let message = String(cString: strerror(errno))
                close()
                throw PQProblem("poll failed: \(message)", connectionLost: true)
            }
        }
    }

    /// `left` in whole milliseconds for `poll`, rounded up.
    private static func milliseconds(_ left: Duration) -> Int32 {
        Int32(clamping: left.wholeMillisecondsRoundedUp)
    }

    /// The connection's last error, the connection closed.
    private func lost() -> PQProblem {
        let message = connection.map(Self.message) ?? "the connection is closed"
        close()
        return PQProblem(message, connectionLost: true)
    }

    /// A failed result: the server's error (the connection stays usable), or,
    /// when the connection went with it (the server ended the session, as
    /// `pg_terminate_backend` or a shutdown does), a lost connection.
    private func failure(_ result: OpaquePointer) -> PQProblem {
        var problem = Self.problem(result)
        if let connection, PQstatus(connection) != CONNECTION_OK {
            close()
            problem.connectionLost = true
        }
        return problem
    }

    private static func message(_ connection: OpaquePointer) -> String {
        String(cString: PQerrorMessage(connection)).trimmingSpaces
    }

    /// A server's error: its message and SQLSTATE.
    private static func problem(_ result: OpaquePointer) -> PQProblem {
        let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        return PQProblem(String(cString: PQresultErrorMessage(result)).trimmingSpaces, sqlState: state)
    }
}

/// A query's rows, in PostgreSQL's binary format, read in place.
public final class PQRows {
    private let result: OpaquePointer
    /// How many rows.
    public let count: Int

    init(_ result: OpaquePointer) {
        self.result = result
        count = Int(PQntuples(result))
    }

    deinit { PQclear(result) }

    /// The cell's bytes, nil for NULL; valid while `self` lives.
    public func bytes(_ row: Int, _ column: Int) -> UnsafeRawBufferPointer? {
        guard PQgetisnull(result, Int32(row), Int32(column)) == 0 else { return nil }
        let length = Int(PQgetlength(result, Int32(row), Int32(column)))
        return UnsafeRawBufferPointer(start: PQgetvalue(result, Int32(row), Int32(column)), count: length)
    }

    /// A BIGINT cell, nil for NULL.
    public func int64(_ row: Int, _ column: Int) -> Int64? {
        guard let bytes = bytes(row, column), bytes.count == 8 else { return nil }
        return Int64(bigEndian: bytes.loadUnaligned(as: Int64.self))
    }

    /// A BOOLEAN cell, nil for NULL.
    public func bool(_ row: Int, _ column: Int) -> Bool? {
        guard let bytes = bytes(row, column), bytes.count == 1 else { return nil }
        return bytes[0] != 0
    }

    /// A TEXT cell, nil for NULL.
    public func string(_ row: Int, _ column: Int) -> String? {
        bytes(row, column).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// A notification a `LISTEN` brought: its channel and payload.
public struct PQNotification: Sendable, Equatable {
    public var channel: String
    public var payload: String
}

/// A statement's parameter, sent in PostgreSQL's binary format with its type
/// named, so `$1` needs no cast to be read as what it is.
public enum PQValue: Sendable {
    case int64(Int64?)
    case text(String?)
    case bytes([UInt8]?)
    case int64s([Int64])
    case texts([String])
    case byteas([[UInt8]])

    /// The type's OID, and the value's bytes (nil for NULL).
    var encoded: (type: Oid, bytes: [UInt8]?) {
        switch self {
        case .int64(let value): (20, value.map(Self.bigEndian))
        case .text(let value): (25, value.map { Array($0.utf8) })
        case .bytes(let value): (17, value)
        case .int64s(let values): (1016, Self.array(of: 20, values.map(Self.bigEndian)))
        case .texts(let values): (1009, Self.array(of: 25, values.map { Array($0.utf8) }))
        case .byteas(let values): (1001, Self.array(of: 17, values))
        }
    }

    private static func bigEndian<Integer: FixedWidthInteger>(_ value: Integer) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    /// A one-dimensional array with no NULLs in the binary form of PostgreSQL's
    /// `array_send`: dimensions, a NULL flag, the element type, each dimension's
    /// length and lower bound (1), then each element's length and bytes.
    private static func array(of element: Oid, _ elements: [[UInt8]]) -> [UInt8] {
        var bytes = bigEndian(Int32(elements.isEmpty ? 0 : 1)) + bigEndian(Int32(0)) + bigEndian(UInt32(element))
        if !elements.isEmpty { bytes += bigEndian(Int32(elements.count)) + bigEndian(Int32(1)) }
        for element in elements { bytes += bigEndian(Int32(element.count)) + element }
        return bytes
    }
}

/// Calls `body` with C pointers to each of `buffers` (nil for a nil buffer),
/// valid during the call: all of them copied into one allocation.
private func withPointers<Result>(to buffers: [[UInt8]?], _ body: ([UnsafePointer<CChar>?]) -> Result) -> Result {
    var joined: [UInt8] = []
    joined.reserveCapacity(buffers.reduce(0) { $0 + ($1?.count ?? 0) } + 1)
    var offsets: [Int?] = []
    offsets.reserveCapacity(buffers.count)
    for buffer in buffers {
        offsets.append(buffer.map { _ in joined.count })
        if let buffer { joined += buffer }
    }
    // One byte more, so an empty value at the end still has a pointer (a NULL pointer would send NULL).
    joined.append(0)
    return joined.withUnsafeBufferPointer { raw in
        let base = UnsafeRawPointer(raw.baseAddress!).assumingMemoryBound(to: CChar.self)
        return body(offsets.map { $0.map { base + $0 } })
    }
}

/// Why a libpq call failed: libpq's or the server's message.
public struct PQProblem: Error, CustomStringConvertible {
    public var description: String
    /// The server's SQLSTATE when the server answered with an error (the query's own fault).
    public var sqlState: String?
    /// A deadline passed: the server did not answer in time (the connection is closed).
    public var timedOut: Bool
    /// The connection was lost (and is closed): the server is gone, or ended the session.
    public var connectionLost: Bool

    /// Whether the server answered the query with an error of its own, and is up.
    public var isQueryError: Bool { sqlState != nil && !timedOut && !connectionLost }

    public init(_ description: String, sqlState: String? = nil, timedOut: Bool = false, connectionLost: Bool = false) {
        self.description = description
        self.sqlState = sqlState
        self.timedOut = timedOut
        self.connectionLost = connectionLost
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        var text = Substring(self)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return String(text)
    }
}
