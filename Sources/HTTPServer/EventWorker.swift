import CEpoll
import Glibc
import HTTPTypes
import Synchronization

/// One thread of the event loop: its epoll set, its connections, its shard.
///
/// Only this thread touches its connections. Other threads reach it through
/// its mailbox (the answers of waits) and through its shard's locks (the head
/// sweeper shutting an overdue socket down, which this thread then reads as
/// an end and closes).
final class EventWorker: @unchecked Sendable {
    // @unchecked Sendable: everything but `running`, the mailbox and the shard
    // is touched only by the worker's own thread, once started.
    let core: ServerCore
    let index: Int
    let shard: WorkerShard
    private let listener: Int32
    private let epoll: Int32
    let mailbox = EventMailbox()
    private let running = Atomic<Bool>(true)
    private var thread: pthread_t?
    var connections: [EventConnection?] = []
    private var serials: UInt64 = 0
    /// The answer's head is built here, then sent with the body in one call.
    var scratch: [UInt8] = []
    var date = DateLine()
    /// The worker's clock (time since the server started), read once a turn of the loop.
    var now: Duration = .zero
    private var nextSweep: Duration = .zero
    /// Set while accepts are paused, out of descriptors: when to listen again.
    private var acceptsPausedUntil: Duration?
    /// Whether the server stopped accepting (shutdown): the listener is never taken back,
    /// and each answer says it is its connection's last.
    let accepting = Atomic<Bool>(true)

    /// How long a connection closed after its answer keeps reading (and
    /// dropping) what its client still sends, so the close sends a FIN after
    /// the answer and not a reset that could overtake it (nginx's lingering close).
    static let lingering: Duration = .seconds(2)
    /// The connections taken from the listening socket in one turn: one, as
    /// nginx takes (`multi_accept off`), so a burst of new connections spreads
    /// over the idle workers (the listener wakes one of them per connection)
    /// instead of landing on whichever woke first. Taking 16 a turn put all of
    /// wrk's 32 on one worker: fine on two cores shared with wrk, but on a
    /// server with cores to spare, one worker's core would cap all of them.
    static let acceptsPerTurn = 1

    init(core: ServerCore, index: Int, listener: Int32) {
        self.core = core
        self.index = index
        shard = core.shards[index]
        self.listener = listener
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        scratch.reserveCapacity(2048)
        // Level-triggered, and exclusive: a new connection wakes one idle worker, not all.
        add(listener, events: WF_EPOLLIN | WF_EPOLLEXCLUSIVE)
        add(mailbox.wake, events: WF_EPOLLIN)
    }

    deinit { close(epoll) }

    func start() {
        let box = Unmanaged.passRetained(self).toOpaque()
        var id = pthread_t()
        let made = pthread_create(
            &id, nil,
            { raw in
                let worker = Unmanaged<EventWorker>.fromOpaque(raw!).takeRetainedValue()
                _ = pthread_setname_np(pthread_self(), "warmfeed-http-\(worker.index)")
                worker.run()
                return nil
            }, box)
        precondition(made == 0, "could not start an HTTP worker thread")
        thread = id
    }

    func stopAccepting() {
        accepting.store(false, ordering: .releasing)
        _ = epoll_ctl(epoll, Int32(EPOLL_CTL_DEL), listener, nil)
    }

    func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        mailbox.ring()
        if let thread { pthread_join(thread, nil) }
    }

    private func add(_ socket: Int32, events: UInt32) {
        var event = epoll_event()
        event.events = events
        event.data.fd = socket
        _ = epoll_ctl(epoll, Int32(EPOLL_CTL_ADD), socket, &event)
    }

    /// Asks for EPOLLOUT only while an answer waits for room in the socket.
    func watchWrites(_ connection: EventConnection, _ on: Bool) {
        var event = epoll_event()
        event.events = WF_EPOLLIN | WF_EPOLLRDHUP | WF_EPOLLET | (on ? WF_EPOLLOUT : 0)
        event.data.fd = connection.socket
        _ = epoll_ctl(epoll, Int32(EPOLL_CTL_MOD), connection.socket, &event)
    }

    // MARK: - The loop

    private func run() {
        let capacity = 256
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        while running.load(ordering: .relaxed) {
            let count = epoll_wait(epoll, events, Int32(capacity), 1000)
            now = ContinuousClock.now - core.started
            for slot in 0..<max(0, Int(count)) {
                let socket = events[slot].data.fd
                let flags = events[slot].events
                if socket == listener {
                    acceptConnections()
                } else if socket == mailbox.wake {
                    deliver()
                } else if let connection = connection(socket) {
                    let readable = flags & (WF_EPOLLIN | WF_EPOLLRDHUP | WF_EPOLLHUP | WF_EPOLLERR) != 0
                    if readable { connection.drained = false }
                    // A whole answer sent goes on to the connection's next request (flush serves it).
                    if flags & WF_EPOLLOUT != 0, connection.isWriting { flush(connection) }
                    if readable, !connection.isClosed, !connection.isWriting { service(connection) }
                }
            }
            if now >= nextSweep {
                nextSweep = now + .seconds(1)
                sweepStalls()
                if let until = acceptsPausedUntil, now >= until {
                    acceptsPausedUntil = nil
                    if accepting.load(ordering: .acquiring) { add(listener, events: WF_EPOLLIN | WF_EPOLLEXCLUSIVE) }
                }
            }
        }
        for case let connection? in connections { closeConnection(connection) }
    }

    private func connection(_ socket: Int32) -> EventConnection? {
        socket >= 0 && Int(socket) < connections.count ? connections[Int(socket)] : nil
    }

    private func acceptConnections() {
        for _ in 0..<Self.acceptsPerTurn {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let socket = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    accept4(listener, $0, &length, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
                }
            }
            guard socket >= 0 else {
                // Out of descriptors: the listening socket would wake this worker at once, again and
                // again; it stops listening for a second (nginx waits half a second), then listens again.
                if errno == EMFILE || errno == ENFILE, acceptsPausedUntil == nil {
                    _ = epoll_ctl(epoll, Int32(EPOLL_CTL_DEL), listener, nil)
                    acceptsPausedUntil = now + .seconds(1)
                }
                return
            }
            var one: Int32 = 1
            _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let peer = address.sin_family == sa_family_t(AF_INET) ? UInt32(bigEndian: address.sin_addr.s_addr) : 0
            if Int(socket) >= connections.count {
                connections.append(contentsOf: repeatElement(nil, count: Int(socket) + 64 - connections.count))
            }
            serials += 1
            let connection = EventConnection(
                socket: socket, peer: peer, serial: serials, capacity: core.configuration.connectionMemoryLimit, now: now)
            connections[Int(socket)] = connection
            // Shed, or refused at a first look: shut down, so its first read ends it here.
            core.opened(socket: socket, address: peer, shard: index)
            add(socket, events: WF_EPOLLIN | WF_EPOLLRDHUP | WF_EPOLLET)
            service(connection)
        }
    }

    /// Reads what the socket holds (while there is room), then answers what it can.
    func service(_ connection: EventConnection) {
        while !connection.isClosed {
            if !connection.drained, !connection.readClosed, !readSome(connection) { return }
            process(connection)
            // Room made by answering (or by moving what is left to the buffer's start)
            // lets the rest of a full buffer's socket be read.
            guard !connection.isClosed, !connection.drained, !connection.readClosed, !connection.isWriting,
                connection.end < connection.capacity || connection.start > 0
            else { return }
        }
    }

    /// Reads until the socket is empty or the buffer full; false when the connection was closed.
    private func readSome(_ connection: EventConnection) -> Bool {
        while true {
            let room = connection.makeRoom()
            guard room > 0 else { return true }
            let count = recv(connection.socket, connection.buffer + connection.end, room, 0)
            if count > 0 {
                connection.end += count
                connection.lastActivity = now
                if count < room {
                    connection.drained = true
                    return true
                }
                continue
            }
            if count == 0 {
                connection.readClosed = true
                connection.drained = true
                return true
            }
            switch errno {
            case EAGAIN, EWOULDBLOCK:
                connection.drained = true
                return true
            case EINTR: continue
            default:
                closeConnection(connection)
                return false
            }
        }
    }

    // MARK: - Requests

    /// Answers the requests the buffer holds, one at a time, while the answers go out at once.
    private func process(_ connection: EventConnection) {
        while !connection.isClosed, !connection.isWriting {
            switch connection.phase {
            case .closed, .waiting:
                return
            case .lingering:
                // What a closed connection's client still sends is dropped.
                connection.start = connection.end
                if connection.readClosed { closeConnection(connection) }
                return
            case .body(let head, let remaining):
                let taken = min(remaining, connection.end - connection.start)
                if connection.keepsBody, connection.body.count + taken <= core.configuration.maxFormBytes {
                    connection.body.append(contentsOf: UnsafeBufferPointer(start: connection.buffer + connection.start, count: taken))
                }
                connection.start += taken
                guard remaining - taken == 0 else {
                    connection.phase = .body(head, remaining: remaining - taken)
                    if connection.readClosed { closeConnection(connection) }
                    return
                }
                connection.phase = .head
                let body = connection.body
                connection.body = []
                dispatch(connection, head, body: body, closes: head.closes)
            case .head:
                if connection.scanned == 0 {
                    // Empty lines between requests are skipped (RFC 9112 §2.2).
                    while connection.start < connection.end, connection.buffer[connection.start] == 0x0D || connection.buffer[connection.start] == 0x0A {
                        connection.start += 1
                    }
                }
                let available = connection.end - connection.start
                if available == 0 {
                    if connection.readClosed { closeConnection(connection) }
                    return
                }
                guard let headEnd = HeadParser.end(of: connection.buffer + connection.start, count: available, from: connection.scanned) else {
                    connection.scanned = max(0, available - 2)
                    if connection.start == 0, connection.end == connection.capacity {
                        tooLarge(connection)
                    } else if connection.readClosed {
                        closeConnection(connection)
                    }
                    return
                }
                let headStart = connection.start
                connection.scanned = 0
                connection.start += headEnd
                begin(connection, head: connection.buffer + headStart, length: headEnd)
            }
        }
    }

    /// A head that does not fit the buffer: 414 when its request line does not, else 431.
    private func tooLarge(_ connection: EventConnection) {
        requestBegan(connection)
        let lineEnds = memchr(connection.buffer, 0x0A, connection.end) != nil
        let answer: Response =
            lineEnds
            ? .plain(431, "the request head is too large: at most \(connection.capacity) bytes")
            : .plain(414, "URL too long: at most \(core.configuration.maxTargetLength) bytes")
        connection.start = connection.end
        send(connection, .response(answer), isHead: false, line: .close)
    }

    private func requestBegan(_ connection: EventConnection) {
        shard.connections.withLock { $0.headArrived(socket: connection.socket) }
        if !connection.inFlight {
            connection.inFlight = true
            shard.requestsInFlight.add(1, ordering: .relaxed)
        }
    }

    /// A whole head arrived: checked, then answered now or once its body is in.
    private func begin(_ connection: EventConnection, head bytes: UnsafeMutablePointer<UInt8>, length: Int) {
        requestBegan(connection)
        let configuration = core.configuration
        let head: ParsedHead
        switch HeadParser.check(bytes, length: length, maxHeaderCount: configuration.maxHeaderCount) {
        case .failure(let problem): return refuse(connection, problem)
        case .success(let parsed): head = parsed
        }
        // No route takes a chunked body: answered now, unread, and the connection then closes.
        if head.lines.head.isChunked { return dispatch(connection, head, body: [], closes: true) }
        let length = head.lines.head.declaredLength ?? 0
        if length > configuration.maxBodyBytes {
            return refuse(connection, HTTPProblem(status: 413, message: "request body too large: at most \(configuration.maxBodyBytes) bytes"))
        }
        connection.keepsBody = head.method == "POST"
        if connection.keepsBody, length > configuration.maxFormBytes {
            return refuse(connection, HTTPProblem(status: 413, message: "form too large: at most \(configuration.maxFormBytes) bytes"))
        }
        guard length > 0 else { return dispatch(connection, head, body: [], closes: head.closes) }
        if head.expectsContinue, connection.end - connection.start < length {
            RawSocket.send(Self.continueLine, to: connection.socket)
        }
        connection.body = []
        connection.phase = .body(head, remaining: length)
    }

    private static let continueLine = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// A head refused: its problem answered, and the connection closed after it.
    private func refuse(_ connection: EventConnection, _ problem: HTTPProblem) {
        shard.connections.withLock { $0.malformed(socket: connection.socket) }
        send(connection, .response(.problem(problem)), isHead: false, line: .close)
    }

    private func dispatch(_ connection: EventConnection, _ head: ParsedHead, body: [UInt8], closes: Bool) {
        let closes = closes || connection.readClosed
        let line: ResponseHead.ConnectionLine = closes ? .close : (head.version == .http10 ? .keepAlive : .none)
        switch core.reply(to: head, body: body, peer: connection.peer) {
        case .now(let response): send(connection, .response(response), isHead: head.isHead, line: line)
        case .prepared(let prepared): send(connection, .prepared(prepared), isHead: head.isHead, line: line)
        case .waiting(let work): wait(connection, head: head, line: line, deadline: nil, otherwise: ServerCore.shedAnswer, work)
        case .waitingAtMost(let deadline, let otherwise, let work):
            wait(connection, head: head, line: line, deadline: deadline, otherwise: otherwise, work)
        }
    }

    private func wait(
        _ connection: EventConnection, head: ParsedHead, line: ResponseHead.ConnectionLine, deadline: Duration?, otherwise: Answer,
        _ work: @escaping @Sendable () async -> Answer
    ) {
        connection.phase = .waiting(isHead: head.isHead, line: line)
        let (mailbox, socket, serial) = (mailbox, connection.socket, connection.serial)
        core.wait(
            in: shard, address: connection.peer, deadline: deadline, otherwise: otherwise,
            resume: { answer in mailbox.post(answer, socket: socket, serial: serial) }, work)
    }

    /// Takes the answers of waits that ended, and sends each on its connection (if it is still the same one).
    private func deliver() {
        for letter in mailbox.take() {
            guard let connection = connection(letter.socket), connection.serial == letter.serial,
                case .waiting(let isHead, let line) = connection.phase
            else { continue }
            connection.phase = .head
            send(connection, letter.answer, isHead: isHead, line: line)
            if !connection.isClosed, !connection.isWriting { service(connection) }
        }
    }
}
