import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real HTTP/1.1 origin on a loopback port, whose answer for each path the
/// test scripts: good bodies, slow ones, drips, resets, truncated bodies,
/// redirects and garbage. It counts what it sees (requests and connections per
/// path, responses the client walked away from, peak concurrency), so tests can
/// check connection reuse, connection caps and cancellation from the outside.
///
/// Plain POSIX sockets, one thread per connection: blocking here never touches
/// Swift's cooperative pool. Call `stop()` when done: the origin's threads keep
/// it alive until then.
// @unchecked Sendable: every mutable field is read and written under `lock`.
public final class FaultyOrigin: @unchecked Sendable {
    /// What the origin does with a request for a path.
    public indirect enum Behavior: Sendable {
        /// Answers `status` with `body`. With `contentLength: false` there is no
        /// `Content-Length` and the body ends when the connection closes.
        case respond(
            status: Int = 200, contentType: String? = "application/octet-stream", body: [UInt8],
            contentLength: Bool = true, headers: [String] = [])
        /// Waits, then behaves as `then`. A client that closes the connection
        /// during the wait is counted in `abandoned(at:)`.
        case delay(Duration, then: Behavior)
        /// Sends headers announcing `length` bytes, then one byte every `interval`.
        case drip(length: Int, interval: Duration = .seconds(1), contentType: String? = "application/octet-stream")
        /// Reads the request, then resets the connection (SO_LINGER 0, close).
        case reset
        /// Announces `length` bytes, sends only `sent`, then closes.
        case truncate(length: Int, sent: [UInt8])
        /// Redirects to `location`: a path on this origin or a whole URL, with
        /// `headers` (whole lines) besides `Location`.
        case redirect(to: String, status: Int = 302, headers: [String] = [])
        /// Answers `304 Not Modified` (with the validators) when the request's
        /// `If-None-Match` names `etag`, or, without one, when its
        /// `If-Modified-Since` is `lastModified`; otherwise 200 with `body` and
        /// the validators given.
        case conditional(etag: String?, lastModified: String?, body: [UInt8], contentType: String? = "application/octet-stream")
        /// Answers 200 with `length` bytes of ``FaultyOrigin/patternCycle``
        /// repeated, made as they are sent: a large body that the origin never
        /// holds in memory.
        case pattern(length: Int)
        /// Announces `length` bytes, sends `sent`, waits `pause` (the client
        /// takes in what was sent), then resets the connection.
        case resetMidBody(length: Int, sent: [UInt8], pause: Duration = .milliseconds(200))
        /// Sends `bytes`, which are not HTTP, then closes.
        case garbage([UInt8])
    }

    private struct PathCounts {
        var requests = 0
        var connections: Set<Int> = []
        var abandoned = 0
        var lastRequest = ""
    }

    private enum Ending { case keepAlive, close, reset }

    /// What the origin does with a kept-alive connection that has been idle
    /// (no byte of a next request) for a while, as CDNs and load balancers do.
    public enum IdleClose: Sendable {
        /// Closes it without a word.
        case silently(after: Duration)
        /// Sends an unasked `408 Request Timeout`, then closes it (RFC 9112 §9.5 allows it).
        case with408(after: Duration)
    }

    /// The port the origin listens on.
    public let port: Int
    /// The loopback address it listens on (`127.0.0.1` unless told otherwise: `127.0.0.2`, `::1`).
    public let host: String
    private let listener: Int32
    private let lock = NSCondition()
    private var scripts: [String: Behavior] = [:]
    private var counts: [String: PathCounts] = [:]
    private var openSockets: [Int: Int32] = [:]
    private var accepted = 0
    private var peakOpen = 0
    private var answering = 0
    private var peakAnswering = 0
    private var liveThreads = 0
    private var stopped = false
    private var idleClose: IdleClose?
    private var idleClosed = 0
    private var threadRetries = 0
    private var acceptErrors = 0

    /// Listens on a free port of `host` (an IPv4 or IPv6 loopback address) and starts accepting.
    public init(host: String = "127.0.0.1") throws {
        let v6 = host.contains(":")
        let listener = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw TestConnection.Failure(description: "socket() failed: \(errno)") }
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var bound = false
        var port = 0
        if v6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            _ = inet_pton(AF_INET6, host, &address.sin6_addr)
            var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(listener, $0, length) == 0 && listen(listener, 128) == 0 && getsockname(listener, $0, &length) == 0
                }
            }
            port = Int(UInt16(bigEndian: address.sin6_port))
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = 0
            address.sin_addr.s_addr = inet_addr(host)
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(listener, $0, length) == 0 && listen(listener, 128) == 0 && getsockname(listener, $0, &length) == 0
                }
            }
            port = Int(UInt16(bigEndian: address.sin_port))
        }
        guard bound else {
            close(listener)
            throw TestConnection.Failure(description: "bind/listen on \(host) failed: errno \(errno)")
        }
        self.listener = listener
        self.host = host
        self.port = port
        liveThreads = 1
        startThread { [self] in acceptLoop() }
    }

    /// The absolute URL of `path` on this origin.
    public func url(_ path: String) -> String { "http://\(host.contains(":") ? "[\(host)]" : host):\(port)\(path)" }

    /// Sets what the origin does for `path` (the whole request target); an
    /// unscripted path answers 404.
    public func script(_ path: String, _ behavior: Behavior) {
        locked { scripts[path] = behavior }
    }

    /// Sets what happens to connections left idle between requests (nil: they stay open).
    public func closeIdleConnections(_ policy: IdleClose?) {
        locked { idleClose = policy }
    }

    /// Idle connections the origin closed (see `closeIdleConnections`).
    public var idleConnectionsClosed: Int { locked { idleClosed } }

    /// Requests received for `path`.
    public func requests(to path: String) -> Int { locked { counts[path]?.requests ?? 0 } }

    /// Distinct connections that carried at least one request for `path`.
    public func connections(to path: String) -> Int { locked { counts[path]?.connections.count ?? 0 } }

    /// Responses for `path` the client walked away from: it closed the
    /// connection while the origin was still waiting or sending.
    public func abandoned(at path: String) -> Int { locked { counts[path]?.abandoned ?? 0 } }

    /// The head (request line and headers) of the last request for `path`.
    public func lastRequest(to path: String) -> String? { locked { counts[path]?.lastRequest } }

    /// Connections accepted since the start.
    public var connectionsAccepted: Int { locked { accepted } }

    /// Times a thread of the origin could not be started at once (the system
    /// refused one: `pthread_create` failed, and was tried again); and
    /// `accept` failures it went on after. Both belong in a failing test's message.
    public var troubles: (threadRetries: Int, acceptErrors: Int) { locked { (threadRetries, acceptErrors) } }

    /// Connections open now.
    public var openConnections: Int { locked { openSockets.count } }

    /// The most connections that were open at once.
    public var peakOpenConnections: Int { locked { peakOpen } }

    /// The most requests that were being answered at once.
    public var peakConcurrentRequests: Int { locked { peakAnswering } }

    /// Polls `condition` until it holds or `timeout` passes; whether it held.
    public func eventually(timeout: Duration = .seconds(30), _ condition: (FaultyOrigin) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(self) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition(self)
    }

    /// Stops listening, closes every connection and waits (a few seconds at
    /// most) for the origin's threads to end. Calling it again does nothing.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        if !stopped {
            stopped = true
            // shutdown, not close: it wakes a thread blocked in accept or recv on
            // the socket, and the thread that owns the descriptor closes it.
            Glibc.shutdown(listener, Int32(SHUT_RDWR))
            for socket in openSockets.values { Glibc.shutdown(socket, Int32(SHUT_RDWR)) }
        }
        let deadline = Date(timeIntervalSinceNow: 5)
        while liveThreads > 0, lock.wait(until: deadline) {}
    }

    // MARK: Threads

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    /// Starts `body` on a thread of its own. Foundation's `Thread.start()`
    /// ignores a `pthread_create` that fails, which would leave a connection
    /// accepted and never served; here a refusal is counted and tried again.
    private func startThread(_ body: @escaping @Sendable () -> Void) {
        final class Box { let body: @Sendable () -> Void; init(_ body: @escaping @Sendable () -> Void) { self.body = body } }
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        while true {
            let box = Unmanaged.passRetained(Box(body))
            var thread = pthread_t()
            let started = pthread_create(
                &thread, &attributes,
                { context in
                    let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
                    box.body()
                    return nil
                }, box.toOpaque())
            if started == 0 { return }
            box.release()
            locked { threadRetries += 1 }
            usleep(10_000)
        }
    }

    private func threadEnded() {
        locked {
            liveThreads -= 1
            lock.broadcast()
        }
    }

    private func acceptLoop() {
        var nextID = 0
        while true {
            let socket = acceptClosingOnExec(listener)
            if socket < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                // Out of descriptors or memory for a moment (a whole test run at once):
                // keep accepting, as nginx does, rather than stop for good.
                if [EMFILE, ENFILE, ENOBUFS, ENOMEM, EPROTO].contains(errno), !locked({ stopped }) {
                    locked { acceptErrors += 1 }
                    usleep(10_000)
                    continue
                }
                break
            }
            nextID += 1
            let id = nextID
            let admitted = locked { () -> Bool in
                guard !stopped else { return false }
                accepted += 1
                openSockets[id] = socket
                peakOpen = max(peakOpen, openSockets.count)
                liveThreads += 1
                return true
            }
            guard admitted else { close(socket); break }
            startThread { [self] in serve(id, socket) }
        }
        close(listener)
        threadEnded()
    }

    private func serve(_ id: Int, _ socket: Int32) {
        var buffer: [UInt8] = []
        var ending = Ending.close
        var served = false
        while let head = readHead(socket, &buffer, kept: served) {
            served = true
            let target = head.split(separator: " ", maxSplits: 2).dropFirst().first.map(String.init) ?? "/"
            let behavior = locked { () -> Behavior? in
                counts[target, default: PathCounts()].requests += 1
                counts[target, default: PathCounts()].connections.insert(id)
                counts[target, default: PathCounts()].lastRequest = head
                answering += 1
                peakAnswering = max(peakAnswering, answering)
                return scripts[target]
            }
            ending = answer(
                behavior ?? .respond(status: 404, contentType: "text/plain", body: Array("not scripted\n".utf8)),
                target: target, head: head, socket: socket)
            locked { answering -= 1 }
            if ending != .keepAlive { break }
        }
        locked { _ = openSockets.removeValue(forKey: id) }
        if ending == .reset {
            var hard = linger(l_onoff: 1, l_linger: 0)
            setsockopt(socket, SOL_SOCKET, SO_LINGER, &hard, socklen_t(MemoryLayout<linger>.size))
        }
        close(socket)
        threadEnded()
    }

    private func answer(_ behavior: Behavior, target: String, head request: String, socket: Int32) -> Ending {
        switch behavior {
        case .respond(let status, let contentType, let body, let contentLength, let headers):
            var lines = headers
            if let contentType { lines.append("Content-Type: \(contentType)") }
            lines.append(contentLength ? "Content-Length: \(body.count)" : "Connection: close")
            guard write(socket, head(status, lines) + body) else { return abandon(target) }
            return contentLength ? .keepAlive : .close
        case .delay(let duration, let then):
            guard wait(socket, duration) else { return abandon(target) }
            return answer(then, target: target, head: request, socket: socket)
        case .drip(let length, let interval, let contentType):
            var lines = ["Content-Length: \(length)"]
            if let contentType { lines.append("Content-Type: \(contentType)") }
            guard write(socket, head(200, lines)) else { return abandon(target) }
            for _ in 0..<length {
                guard wait(socket, interval), write(socket, [UInt8(ascii: "x")]) else { return abandon(target) }
            }
            return .keepAlive
        case .reset:
            return .reset
        case .truncate(let length, let sent):
            _ = write(socket, head(200, ["Content-Length: \(length)", "Content-Type: application/octet-stream"]) + sent)
            return .close
        case .redirect(let location, let status, let headers):
            let lines = headers + ["Location: \(location)", "Content-Length: 0"]
            return write(socket, head(status, lines)) ? .keepAlive : abandon(target)
        case .conditional(let etag, let lastModified, let body, let contentType):
            var validators: [String] = []
            if let etag { validators.append("ETag: \(etag)") }
            if let lastModified { validators.append("Last-Modified: \(lastModified)") }
            let unchanged =
                if let asked = Self.header("If-None-Match", in: request) {
                    etag != nil && asked.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == etag }
                } else {
                    lastModified != nil && Self.header("If-Modified-Since", in: request) == lastModified
                }
            if unchanged { return write(socket, head(304, validators)) ? .keepAlive : abandon(target) }
            return answer(
                .respond(contentType: contentType, body: body, headers: validators),
                target: target, head: request, socket: socket)
        case .pattern(let length):
            guard write(socket, head(200, ["Content-Length: \(length)", "Content-Type: application/octet-stream"])) else {
                return abandon(target)
            }
            // 256 cycles a chunk: every chunk starts at the cycle's start.
            let chunk = Array(repeating: Self.patternCycle, count: 256).flatMap { $0 }
            var left = length
            while left > 0 {
                guard write(socket, Array(chunk.prefix(left))) else { return abandon(target) }
                left -= min(left, chunk.count)
            }
            return .keepAlive
        case .resetMidBody(let length, let sent, let pause):
            _ = write(socket, head(200, ["Content-Length: \(length)", "Content-Type: application/octet-stream"]) + sent)
            _ = wait(socket, pause)
            return .reset
        case .garbage(let bytes):
            _ = write(socket, bytes)
            return .close
        }
    }

    private func abandon(_ target: String) -> Ending {
        locked { if !stopped { counts[target, default: PathCounts()].abandoned += 1 } }
        return .close
    }

    private func head(_ status: Int, _ lines: [String]) -> [UInt8] {
        let reason = [200: "OK", 302: "Found", 304: "Not Modified", 404: "Not Found", 408: "Request Timeout", 500: "Internal Server Error"][status] ?? "Status"
        return Array((["HTTP/1.1 \(status) \(reason)"] + lines).joined(separator: "\r\n").utf8) + [13, 10, 13, 10]
    }

    /// Reads one request head; `nil` when the client closed or sent nonsense,
    /// or the connection, `kept` alive after an answer, sat idle past the idle
    /// policy (and was closed so). A new connection is never closed as idle: a
    /// client starved of CPU between its connect and its request is not idle.
    /// Request bodies are not expected (the fetcher only GETs) and not read.
    private func readHead(_ socket: Int32, _ buffer: inout [UInt8], kept: Bool) -> String? {
        while true {
            if let end = buffer.firstRange(of: [13, 10, 13, 10]) {
                let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
                buffer.removeFirst(end.upperBound)
                return head
            }
            guard buffer.count < 65536 else { return nil }
            if kept, buffer.isEmpty, let policy = locked({ idleClose }), !awaitBytes(socket, policy) { return nil }
            var chunk = [UInt8](repeating: 0, count: 16384)
            let n = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            buffer.append(contentsOf: chunk[..<n])
        }
    }

    /// Waits for a next request under the idle policy: `true` once bytes are
    /// there, `false` when the connection sat idle too long and was closed
    /// (silently, or after an unasked 408).
    private func awaitBytes(_ socket: Int32, _ policy: IdleClose) -> Bool {
        let after: Duration
        switch policy {
        case .silently(let limit), .with408(let limit): after = limit
        }
        let (seconds, attoseconds) = after.components
        var watch = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&watch, 1, Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000))
        if ready != 0 { return true }
        if case .with408 = policy {
            _ = write(socket, head(408, ["Content-Length: 0", "Connection: close"]))
        }
        locked { idleClosed += 1 }
        return false
    }

    /// Sends all of `bytes`; `false` when the client is gone.
    private func write(_ socket: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Waits `duration` while watching the connection; `false` when the client
    /// closed it (or the origin is stopping) before the time was up.
    private func wait(_ socket: Int32, _ duration: Duration) -> Bool {
        let deadline = ContinuousClock.now + duration
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return true }
            let (seconds, attoseconds) = left.components
            let millis = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var watch = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&watch, 1, millis)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            var byte: UInt8 = 0
            let peeked = recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
            if peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EINTR) { return false }
            if peeked > 0 {
                // The client sent more (it pipelines); only a close ends the wait,
                // so sleep out the rest instead of polling a readable socket.
                Thread.sleep(forTimeInterval: Double(millis) / 1000)
                return !locked { stopped }
            }
        }
    }
}

extension FaultyOrigin {
    /// A loopback port bound but never listened on: every connection to it is
    /// refused at once, and no other server can take the port while it lives
    /// (a port closed instead may be taken by another test's server meanwhile).
    public final class RefusingPort: Sendable {
        /// The port that refuses.
        public let port: Int
        private let socket: Int32

        public init() throws {
            (socket, port) = try loopbackSocket(listening: false)
        }

        deinit { Glibc.close(socket) }
    }

    /// A TCP socket bound to a free loopback port, listening with a backlog of zero or not at all.
    private static func loopbackSocket(listening: Bool) throws -> (socket: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestConnection.Failure(description: "socket() failed: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && (!listening || listen(fd, 0) == 0) && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(fd)
            throw TestConnection.Failure(description: "bind/listen on loopback failed: errno \(errno)")
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// A loopback port whose listener never accepts and whose accept queue is
    /// already full, so the kernel drops new connection attempts: a client's
    /// connect hangs until its own connect timeout, as with an unreachable host.
    // @unchecked Sendable: `sockets` is written once in init and read by `close`, under `lock`.
    public final class StalledPort: @unchecked Sendable {
        /// The port nobody gets through to.
        public let port: Int
        private let lock = NSLock()
        private var sockets: [Int32] = []

        /// Listens with a backlog of zero and fills the queue with connections of its own.
        public init() throws {
            let (listener, port) = try loopbackSocket(listening: true)
            sockets.append(listener)
            self.port = port
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            // Non-blocking connects: the first fills the queue, the others wait in SYN-SENT.
            for _ in 0..<3 {
                let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                guard filler >= 0 else { continue }
                sockets.append(filler)
                _ = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
        }

        /// Closes the listener and its own connections. Calling it again does nothing.
        public func close() {
            lock.lock()
            defer { lock.unlock() }
            for socket in sockets { Glibc.close(socket) }
            sockets.removeAll()
        }

        deinit { close() }
    }
}
