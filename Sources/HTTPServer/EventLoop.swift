import CEpoll
import Glibc
import Synchronization

/// The server's own HTTP/1.1 event loop: one listening socket, and one
/// thread per worker, each with its own epoll set, its own connections and
/// its own shard of what `ServerCore` keeps (`WorkerShard`), so a request
/// touches nothing another worker touches.
///
/// It carries what libmicrohttpd's loop did for the server (which it replaced), and no more: the
/// head read and checked (`HeadParser`, `RequestHead`), bodies up to the
/// limits, keep-alive and pipelining, waits resumed through each worker's
/// eventfd, answers written with one `sendmsg` (head and body together,
/// `ResponseHead`), and a stall of a body or an answer past `idleTimeout`
/// closed. Heads that are overdue, and the connection limits, stay
/// `ConnectionTable`'s and the head sweeper's.
///
/// Measured on the same bytes beside nginx (bench/ceiling.sh's question, with
/// the real handler): see BENCHMARKS.md, "the server's own loop".
final class EventLoop: Sendable {
    let port: Int
    private let listener: Int32
    private let workers: [EventWorker]

    /// Binds `address` and starts one worker per shard of `core`.
    init(core: ServerCore, address: sockaddr_in) throws {
        let listener = try Self.listen(address, backlog: core.configuration.backlog, named: "\(core.configuration.host):\(core.configuration.port)")
        self.listener = listener
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
        workers = core.shards.indices.map { EventWorker(core: core, index: $0, listener: listener) }
        for worker in workers { worker.start() }
    }

    /// The listening socket, for the accept deferral set on it.
    var listenSocket: Int32 { listener }

    /// Stops accepting: new connections are refused from now on; those held go on.
    func stopAccepting() {
        for worker in workers { worker.stopAccepting() }
        _ = shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// Stops every worker, closing the connections each still holds.
    func stop() {
        for worker in workers { worker.stop() }
    }

    private static func listen(_ address: sockaddr_in, backlog: Int, named name: String) throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw HTTPServer.StartError(description: "could not make a socket") }
        var one: Int32 = 1
        _ = setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = address
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(socket, Int32(clamping: backlog)) == 0 else {
            close(socket)
            throw HTTPServer.StartError(description: "could not listen on \(name) (in use, or not allowed)")
        }
        return socket
    }
}

/// A worker's mailbox: answers of waits, handed over by the threads that
/// end them, and the eventfd that wakes the worker to take them.
final class EventMailbox: Sendable {
    struct Letter {
        let socket: Int32
        let serial: UInt64
        let answer: Answer
    }

    let wake: Int32
    private let letters = Mutex<[Letter]>([])

    init() {
        wake = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
    }

    deinit { close(wake) }

    /// Leaves `answer` for the connection `socket` had when its wait began (`serial`), and wakes the worker.
    func post(_ answer: Answer, socket: Int32, serial: UInt64) {
        letters.withLock { $0.append(Letter(socket: socket, serial: serial, answer: answer)) }
        ring()
    }

    /// Wakes the worker without a letter (to stop, or to stop accepting).
    func ring() {
        var one: UInt64 = 1
        _ = write(wake, &one, MemoryLayout<UInt64>.size)
    }

    /// Every letter left since the last take.
    func take() -> [Letter] {
        var value: UInt64 = 0
        _ = read(wake, &value, MemoryLayout<UInt64>.size)
        return letters.withLock { letters in
            defer { letters.removeAll(keepingCapacity: true) }
            return letters
        }
    }
}
