import CDateLine
import Glibc
import Logging
import ServiceLifecycle
import Synchronization

/// An HTTP/1.1 server that hands every request to one handler, on its own
/// epoll loop (`EventLoop`).
///
/// It knows nothing of what it serves. It may be made before its handler
/// (what watches it, and the routes that show what it watched, can be made
/// after it), and is given it with `answer(with:)`; the handler is fixed
/// when it starts. Start it with `start()` (or run it as a `Service`), read
/// the bound `port`, stop it with `shutdown()`: new connections are refused at
/// once, requests still in flight get `shutdownGrace` seconds.
public final class HTTPServer: Service, Sendable {
    /// Why the server could not start.
    public struct StartError: Error, CustomStringConvertible {
        /// What went wrong, for the operator.
        public var description: String
    }

    private enum State {
        /// Made, not listening: the handler, once given.
        case idle(handler: Router.Handler?)
        case serving(core: ServerCore, loop: EventLoop, sweeper: HeadSweeper)
        case stopped(core: ServerCore)
    }

    let configuration: HTTPServerConfiguration
    let logger: Logger
    private let state: Mutex<State>

    /// Makes a server to be given its handler (`answer(with:)`) before it
    /// starts; it does not listen until started.
    public init(configuration: HTTPServerConfiguration, logger: Logger = Logger(label: "warmfeed.http")) {
        self.configuration = configuration
        self.logger = logger
        state = Mutex(.idle(handler: nil))
    }

    /// Makes a server that answers with `handler`; it does not listen until started.
    public convenience init(configuration: HTTPServerConfiguration, logger: Logger = Logger(label: "warmfeed.http"), handler: @escaping Router.Handler) {
        self.init(configuration: configuration, logger: logger)
        answer(with: handler)
    }

    /// Gives the server the handler every request is handed to. Before it
    /// starts: from then on the handler is fixed (the request path reads it
    /// from a constant, never through a lock or a reference count every thread shares).
    public func answer(with handler: @escaping Router.Handler) {
        state.withLock { state in
            guard case .idle = state else { preconditionFailure("a server is given its handler before it starts") }
            state = .idle(handler: handler)
        }
    }

    /// What the request path runs on, once started.
    var core: ServerCore? {
        state.withLock { state in
            switch state {
            case .idle: nil
            case .stopped(let core), .serving(let core, _, _): core
            }
        }
    }

    /// The bytes of memory each connection is given for its heads (the loop's read buffer).
    public var connectionMemoryLimit: Int { configuration.connectionMemoryLimit }

    /// The address it listens on, as configured.
    public var host: String { configuration.host }

    /// The bound port, once started (useful when the configuration asked for port 0).
    public var port: Int {
        state.withLock {
            switch $0 {
            case .serving(_, let loop, _): loop.port
            case .idle, .stopped: 0
            }
        }
    }

    /// Binds and starts the worker threads, answering with the handler given.
    /// Calling it twice, or before a handler is given, is an error.
    public func start() throws {
        try state.withLock { state in
            guard case .idle(let handler) = state else { throw StartError(description: "the server was already started") }
            guard let handler else { throw StartError(description: "the server was given no handler") }
            let core = ServerCore(configuration: configuration, handler: handler, logger: logger)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(clamping: configuration.port)).bigEndian
            guard inet_pton(AF_INET, configuration.host, &address.sin_addr) == 1 else {
                throw StartError(description: "--host must be an IPv4 address, not \(configuration.host)")
            }
            Self.raiseOpenFileLimit(to: core.openFilesNeeded)
            let loop: EventLoop
            do {
                loop = try EventLoop(core: core, address: address)
            } catch {
                core.stopHandlers()
                throw error
            }
            Self.deferAccepts(on: loop.listenSocket, seconds: configuration.deferAccept)
            let sweeper = HeadSweeper { [core] in
                core.expireSlowHeads()
                core.expireLateWaits()
            }
            state = .serving(core: core, loop: loop, sweeper: sweeper)
        }
        logger.info("listening", metadata: ["address": "http://\(configuration.host):\(port)/"])
        // Each response's Date line is made with gmtime_r (`DateLine`, once a second a worker):
        // CDateLine's takes no lock, glibc's takes the process's time-zone lock (a build that linked it otherwise).
        if wf_gmtime_r_is_lock_free() == 0 {
            logger.warning("gmtime_r is glibc's: every response's Date line takes the process's time-zone lock")
        }
    }

    /// Stops accepting, lets requests in flight finish (up to the grace period), then stops.
    public func shutdown() async {
        let serving: (ServerCore, EventLoop, HeadSweeper)? = state.withLock { state in
            guard case .serving(let core, let loop, let sweeper) = state else { return nil }
            state = .stopped(core: core)
            return (core, loop, sweeper)
        }
        guard let (core, loop, sweeper) = serving else { return }
        sweeper.stop()
        loop.stopAccepting()
        await drain(core)
        loop.stop()
        core.stopHandlers()
        logger.info("stopped")
    }

    /// Lets the requests in flight end, within the grace period; then answers
    /// every wait still on with 503 and lets those answers go out too.
    private func drain(_ core: ServerCore) async {
        let deadline = ContinuousClock.now + .milliseconds(Int(configuration.shutdownGrace * 1000))
        while core.requestsInFlight > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        if core.answerWaitingConnections() > 0 {
            // The answers must reach their connections' threads before the loop stops: wait
            // until their requests have ended, not a set time (200 ms was too short under a
            // loaded machine), for at most 5 s.
            let limit = ContinuousClock.now + .seconds(5)
            repeat {
                try? await Task.sleep(for: .milliseconds(10))
            } while core.requestsInFlight > 0 && ContinuousClock.now < limit
        }
    }

    /// Connections held now, and how many were shed since start and why (none before it starts).
    public var connections: ConnectionCounts { core?.connectionCounts ?? ConnectionCounts() }

    /// Asks the kernel to hand over a new connection only once it has sent
    /// bytes, or after `seconds` (see `HTTPServerConfiguration.deferAccept`).
    private static func deferAccepts(on socket: Int32, seconds: Int) {
        guard socket >= 0, seconds > 0 else { return }
        var value = Int32(clamping: seconds)
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_DEFER_ACCEPT, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Raises this process's soft open-file limit toward `needed` (never past
    /// the hard limit), as nginx's `worker_rlimit_nofile` does: the usual soft
    /// limit of 1024 would cap connections far below the configured limit.
    private static func raiseOpenFileLimit(to needed: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(needed) else { return }
        limit.rlim_cur = min(rlim_t(needed), limit.rlim_max)
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// Runs as a service: starts, waits for graceful shutdown (SIGTERM/SIGINT), stops.
    public func run() async throws {
        if case .idle = state.withLock({ $0 }) { try start() }
        try? await gracefulShutdown()
        await shutdown()
    }

    deinit {
        switch state.withLock({ $0 }) {
        case .serving(let core, let loop, let sweeper):
            sweeper.stop()
            loop.stopAccepting()
            loop.stop()
            core.stopHandlers()
        case .stopped(let core): core.stopHandlers()
        case .idle: break
        }
    }
}
