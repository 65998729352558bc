import CMicroHTTPD
import Glibc
import HTTPTypes
import Logging
import Synchronization
import ThreadSlots

/// The part of the server that libmicrohttpd's callbacks reach: it turns a
/// connection's callbacks into a `Request`, asks the handler, and queues the
/// `Response`, suspending the connection while an async handler works.
///
/// What it keeps about connections and requests is kept per libmicrohttpd
/// worker thread (`WorkerShard`): a request's callbacks lock only their own
/// worker's shard, which no other worker takes, so the request path shares no
/// lock between threads (one table for all of them was the lock every request
/// waited on at 8 threads: all of the futex calls of warm pages).
final class ServerCore: Sendable {
    let configuration: HTTPServerConfiguration
    let handler: Router.Handler
    let logger: Logger
    /// Where `.later` work runs: one executor per handler thread, each
    /// worker handing its work to its own share of them in turn (see `WorkerShard.nextHandler`).
    let executors: [HandlerExecutor]
    /// One per worker thread.
    let shards: [WorkerShard]
    private let assignment: ShardAssignment
    let started = ContinuousClock.now

    init(configuration: HTTPServerConfiguration, handler: @escaping Router.Handler, logger: Logger) {
        self.configuration = configuration
        self.handler = handler
        self.logger = logger
        executors = (0..<max(1, configuration.handlerThreads)).map { HandlerExecutor(name: "warmfeed-handler-\($0)") }
        // Each worker enforces its share of the limits, as libmicrohttpd divides
        // its own connection limit among its workers.
        let count = max(1, configuration.threads)
        func share(_ limit: Int) -> Int { (max(1, limit) + count - 1) / count }
        let limits = ConnectionTable.Limits(
            connections: share(configuration.connectionLimit),
            perAddress: share(configuration.connectionsPerAddress),
            headTimeout: .seconds(max(1, configuration.headTimeout))
        )
        // Waits hold their connection: at most half the connections wait, so the
        // rest always hold one a newcomer can take; an address as many as it may
        // hold connections. Half of those (as first built) shed nine in ten of the
        // 512-connection mix's thumbnails: a closed-loop crowd from one address
        // (or behind one proxy) has a request waiting on almost every connection,
        // and waits of connections its client closed stay until their work ends.
        let waits = SuspendedWaits.Limits(
            total: share(configuration.connectionLimit / 2), perAddress: share(configuration.connectionsPerAddress))
        // Worker w takes handlers w, w + count, …: no handler's queue is fed by
        // two workers (with fewer handlers than workers, they share by remainder).
        shards = (0..<count).map { [executors] worker in
            let own = executors.count >= count ? executors.indices.filter { $0 % count == worker } : [worker % executors.count]
            return WorkerShard(limits: limits, waits: waits, handlers: own.map { executors[$0] })
        }
        assignment = ShardAssignment(shards: count)
    }

    /// The shard of `connection`: the one its worker was given when it opened
    /// (kept in its socket context), or the first for a connection not seen open.
    func shard(of connection: OpaquePointer) -> WorkerShard {
        let stored = Int(bitPattern: wf_mhd_connection_context(connection))
        return shards[stored > 0 && stored <= shards.count ? stored - 1 : 0]
    }

    /// Lets every handler thread finish its queued jobs and exit.
    func stopHandlers() {
        for executor in executors { executor.stop() }
    }

    /// Requests between their request line and the last byte of their answer,
    /// over every worker; shutdown waits for these, so a response just handed
    /// over is still sent.
    var requestsInFlight: Int {
        shards.reduce(0) { $0 + $1.requestsInFlight.load(ordering: .acquiring) }
    }

    // MARK: - Connections

    /// libmicrohttpd's own limit: ours plus room for connections shut down but
    /// not yet closed by their thread, so shedding never blocks an accept.
    var daemonConnectionLimit: Int {
        let limit = max(1, configuration.connectionLimit)
        return limit + max(64, limit / 8)
    }

    /// A connection opened, on the worker thread that will serve it: it joins
    /// that worker's shard, noted in its socket context for the later callbacks.
    func connectionOpened(_ connection: OpaquePointer, socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) {
        let socket = wf_mhd_connection_socket(connection)
        guard socket >= 0 else { return }
        let index = assignment.shard(ofThread: ThreadSlot.current)
        socketContext?.pointee = UnsafeMutableRawPointer(bitPattern: index + 1)
        opened(socket: socket, address: wf_mhd_connection_ipv4(connection), shard: index)
    }

    func connectionClosed(_ connection: OpaquePointer) {
        let socket = wf_mhd_connection_socket(connection)
        shard(of: connection).connections.withLock { $0.closed(socket: socket) }
    }

    func requestAnswered(_ connection: OpaquePointer) {
        let socket = wf_mhd_connection_socket(connection)
        let now = ContinuousClock.now - started
        shard(of: connection).connections.withLock { $0.answered(socket: socket, at: now) }
    }

    /// Shuts down every connection whose head is overdue, called about twice a
    /// second: with a 408 when a head had begun to arrive, silently when the
    /// connection was idle. An unasked 408 on an idle keep-alive connection
    /// would be read as the answer to the next request a client sends on it
    /// (libcurl 7.88 does), so only a head that began gets one (RFC 9112 §9.5).
    func expireSlowHeads() {
        let now = ContinuousClock.now - started
        for shard in shards {
            shard.connections.withLock { table in
                let (slow, idle) = table.expire(at: now) { overdue in
                    overdue.began || RawSocket.receivedData(on: overdue.socket, within: overdue.waited, sinceAnAnswer: !overdue.first)
                }
                for socket in slow { RawSocket.send(RawSocket.requestTimeout, to: socket) }
                RawSocket.shutDown(slow + idle)
            }
        }
    }

    /// Every worker's counts, summed.
    var connectionCounts: ConnectionCounts {
        var sum = ConnectionCounts()
        for shard in shards {
            shard.connections.withLock { table in
                sum.held += table.held
                sum.slowHeads += table.counts.timedOut
                sum.idleClosed += table.counts.idleClosed
                sum.madeRoom += table.counts.crowdedOut
                sum.refused += table.counts.refused
                sum.malformed += table.counts.malformed
            }
            shard.suspended.withLock { suspended in
                sum.waiting += suspended.waits.count
                sum.waitsShed += suspended.waits.counts.shed
                sum.waitsLate += suspended.waits.counts.late
            }
        }
        return sum
    }

    // MARK: - Requests

    func requestStarted(_ connection: OpaquePointer) { shard(of: connection).requestsInFlight.add(1, ordering: .relaxed) }

    func requestEnded(_ connection: OpaquePointer) { shard(of: connection).requestsInFlight.subtract(1, ordering: .releasing) }

    func handle(
        connection: OpaquePointer,
        context: RequestContext,
        method: String,
        version: UnsafePointer<CChar>?,
        uploadData: UnsafePointer<CChar>?,
        uploadDataSize: UnsafeMutablePointer<Int>?
    ) -> MHD_Result {
        switch context.phase {
        case .started:
            shard(of: connection).connections.withLock { $0.headArrived(socket: wf_mhd_connection_socket(connection)) }
            // First call: headers are in. A head RFC 9112 refuses is answered now
            // (libmicrohttpd then closes the connection, which such a client has earned).
            let lines = readHead(connection: connection)
            let head = lines.head
            if let problem = head.problem(version: version) ?? targetProblem(context: context, version: version) {
                context.phase = .answered
                return queue(.problem(problem), on: connection)
            }
            guard lines.keepsFields else {
                context.phase = .answered
                return queue(.plain(431, "too many header lines: at most \(configuration.maxHeaderCount)"), on: connection)
            }
            context.fields = lines.fields
            // No route takes a body. A chunked one is not read at all: answered
            // now, the connection then closes, and libmicrohttpd never parses a
            // chunk line (one longer than its buffer got a 500 from it).
            if head.isChunked {
                return dispatch(connection: connection, context: context, method: method)
            }
            // One declared past the limit is refused before a byte of it is read:
            // answered now, libmicrohttpd sends the 413 and closes, reading none of
            // it. (Queued once the body is arriving, libmicrohttpd drops the answer
            // and closes without a word.)
            if let length = head.declaredLength, length > configuration.maxBodyBytes {
                context.phase = .answered
                return queue(.plain(413, "request body too large: at most \(configuration.maxBodyBytes) bytes"), on: connection)
            }
            // A POST's body is kept for its handler (a form): a small one only.
            if method == "POST" {
                if let length = head.declaredLength, length > configuration.maxFormBytes {
                    context.phase = .answered
                    return queue(.plain(413, "form too large: at most \(configuration.maxFormBytes) bytes"), on: connection)
                }
                context.keepsBody = true
            }
            // Answering a good request now would make libmicrohttpd close the
            // connection (no keep-alive), so wait for the next call.
            context.phase = .reading
            return .YES
        case .reading:
            if let uploadDataSize, uploadDataSize.pointee > 0 {
                // Only a POST's body is kept (a form, its length checked above);
                // any other is counted and thrown away (its declared length is
                // within the limit, or it was refused above).
                if context.keepsBody, context.body.count + uploadDataSize.pointee <= configuration.maxFormBytes, let uploadData {
                    context.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: uploadDataSize.pointee))
                }
                context.bodyBytes += uploadDataSize.pointee
                uploadDataSize.pointee = 0
                return .YES
            }
            if context.keepsBody, context.bodyBytes > configuration.maxFormBytes {
                context.phase = .answered
                return queue(.plain(413, "form too large: at most \(configuration.maxFormBytes) bytes"), on: connection)
            }
            if context.bodyBytes > configuration.maxBodyBytes {
                context.phase = .answered
                return queue(.plain(413, "request body too large: at most \(configuration.maxBodyBytes) bytes"), on: connection)
            }
            return dispatch(connection: connection, context: context, method: method)
        case .waiting:
            return .YES
        case .answered:
            switch context.response.take() {
            case .response(let response): return queue(response, on: connection)
            case .prepared(let prepared): return queue(prepared, on: connection)
            case nil: break
            }
            // Answered early (a body too large): swallow what is still coming.
            if let uploadDataSize { uploadDataSize.pointee = 0 }
            return .YES
        }
    }

    /// The head's lines, read once: noted for the RFC 9112 rules, and made
    /// into the request's fields unless there are more than the limit.
    private func readHead(connection: OpaquePointer) -> HeadLines {
        // Counted first (libmicrohttpd walks its list without a callback), so
        // the lines' table is made at its size. The bytes get a block within
        // what glibc keeps per thread (1,032 bytes), enough for a browser's head.
        let count = MHD_get_connection_values(connection, .HEADER_KIND, nil, nil)
        var lines = HeadLines(keepsFields: count <= configuration.maxHeaderCount)
        if lines.keepsFields { lines.fields.reserve(lines: max(0, Int(count)), bytes: 960) }
        withUnsafeMutablePointer(to: &lines) { pointer in
            _ = MHD_get_connection_values(connection, .HEADER_KIND, MHDCallbacks.readHeader, UnsafeMutableRawPointer(pointer))
        }
        return lines
    }

    /// A raw NUL in the request target: libmicrohttpd's C string stops at it
    /// (so `/\0../x` would be served as `/`), but the version still starts one
    /// byte after where the target really ended. And a space or a control
    /// character (a bare CR, a tab), which it keeps as part of the target.
    private func targetProblem(context: RequestContext, version: UnsafePointer<CChar>?) -> RequestHead.Problem? {
        if RequestTarget.hasSpaceOrControl(context.rawTarget) {
            return RequestHead.Problem(status: 400, message: RequestTarget.spaceOrControlMessage)
        }
        guard let version, version[0] != 0, context.rawTargetEnd != 0 else { return nil }
        guard Int(bitPattern: version) == context.rawTargetEnd + 1 else {
            return RequestHead.Problem(status: 400, message: "a NUL in the request line")
        }
        return nil
    }

    private func dispatch(connection: OpaquePointer, context: RequestContext, method: String) -> MHD_Result {
        let fields = context.takeFields()
        let target: RequestTarget
        do {
            target = try RequestTarget.parse(context.rawTarget, maxLength: configuration.maxTargetLength)
        } catch {
            context.phase = .answered
            return queue(.problem(error), on: connection)
        }
        guard let method = HTTPRequest.Method(method) else {
            context.phase = .answered
            return queue(.plain(400, "bad method"), on: connection)
        }
        let request = Request(
            method: method, path: target.path, query: target.query, fields: fields, peer: wf_mhd_connection_ipv4(connection),
            body: context.body)
        switch handler(request) {
        case .now(let response):
            context.phase = .answered
            return queue(response, on: connection)
        case .prepared(let prepared):
            context.phase = .answered
            return queue(prepared, on: connection)
        case .waiting(let work):
            return suspend(connection, context, deadline: nil, otherwise: Self.shedAnswer, work)
        case .waitingAtMost(let deadline, let otherwise, let work):
            return suspend(connection, context, deadline: deadline, otherwise: otherwise, work)
        }
    }

    private func queue(_ response: Response, on connection: OpaquePointer) -> MHD_Result {
        guard let mhdResponse = Self.makeMHDResponse(response) else { return .NO }
        defer { MHD_destroy_response(mhdResponse) }
        return MHD_queue_response(connection, UInt32(response.status.code), mhdResponse)
    }

    private func queue(_ prepared: PreparedResponse, on connection: OpaquePointer) -> MHD_Result {
        guard let mhdResponse = prepared.mhdResponse else { return queue(prepared.response, on: connection) }
        return MHD_queue_response(connection, UInt32(prepared.response.status.code), mhdResponse)
    }

    /// A libmicrohttpd response for `response`, whose body it sends without a copy.
    static func makeMHDResponse(_ response: Response) -> OpaquePointer? {
        let body = response.body
        // Retained for libmicrohttpd; `MHDCallbacks.releaseBody` releases it when
        // the MHD response is destroyed (after the last connection sent it).
        let retained = Unmanaged.passRetained(body).toOpaque()
        guard
            let mhdResponse = MHD_create_response_from_buffer_with_free_callback_cls(
                body.count, body.base, MHDCallbacks.releaseBody, retained
            )
        else {
            Unmanaged<ResponseBytes>.fromOpaque(retained).release()
            return nil
        }
        for field in response.headers {
            // HTTPField has already turned CR, LF and NUL in values into spaces, so none is refused.
            var name = field.name.rawName
            name.withUTF8 { name in
                field.withUnsafeBytesOfValue { value in
                    withCStrings(name, value) { name, value in _ = MHD_add_response_header(mhdResponse, name, value) }
                }
            }
        }
        _ = MHD_add_response_header(mhdResponse, "X-Content-Type-Options", "nosniff")
        return mhdResponse
    }

    /// Calls `body` with `name` and `value` as C strings, copied side by side
    /// into one buffer on the stack. Handing libmicrohttpd a Swift `String`
    /// makes a heap copy of it (`utf8CString`) for each call: two for each
    /// header line of every response built, for what libmicrohttpd copies again.
    private static func withCStrings(
        _ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>,
        _ body: (UnsafePointer<CChar>, UnsafePointer<CChar>) -> Void
    ) {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: name.count + value.count + 2) { buffer in
            let base = buffer.baseAddress!
            if let start = name.baseAddress { UnsafeMutableRawPointer(base).copyMemory(from: start, byteCount: name.count) }
            base[name.count] = 0
            let valueStart = base + name.count + 1
            if let start = value.baseAddress { UnsafeMutableRawPointer(valueStart).copyMemory(from: start, byteCount: value.count) }
            valueStart[value.count] = 0
            body(base, valueStart)
        }
    }
}
