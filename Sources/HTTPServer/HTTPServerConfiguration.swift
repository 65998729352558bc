import Workers

/// How the HTTP server listens and what it tolerates from clients.
public struct HTTPServerConfiguration: Sendable {
    /// The IPv4 address to bind (`127.0.0.1` by default).
    public var host: String = "127.0.0.1"
    /// The port to bind; 0 asks the system for a free one (see `HTTPServer.port`).
    public var port: Int = 8080
    /// HTTP worker threads, each with its own epoll loop and connections: one
    /// per core the process can use (`UsableCores`: its affinity and CPU quota
    /// counted; `warmfeed serve --threads` says otherwise).
    public var threads: Int = UsableCores.count
    /// Threads that run async (`.later`) handlers: they may block briefly (a
    /// store read, a render), so there are more of them than cores.
    public var handlerThreads: Int = 8
    /// Connections held at once. Past it, the connection that has waited
    /// longest for its next request head (idle keep-alive or a slow client)
    /// is shut down to make room; if none waits, the new one is closed.
    public var connectionLimit: Int = 4096
    /// Connections one client address may hold; past it, that address's own
    /// longest-waiting connection makes room (nginx's `limit_conn`, but shedding
    /// the slowest rather than refusing the newest).
    public var connectionsPerAddress: Int = 1024
    /// Seconds a connection has to deliver a whole request head, counted from
    /// when it opened or its previous answer was sent, however slowly the bytes
    /// trickle in. This is also how long a keep-alive connection stays idle.
    public var headTimeout: Int = 10
    /// Seconds a connection may stay idle (no bytes) before it is closed.
    public var idleTimeout: Int = 15
    /// Bytes of header and request-line memory per connection: the event
    /// loop's read buffer (a head longer gets 431, a request line longer 414).
    /// 32 KiB still reads a 16 KB request line far enough to answer it with a clear 414.
    public var connectionMemoryLimit: Int = 32 * 1024
    /// The longest request target accepted (nginx's default header buffer is 8 KB).
    public var maxTargetLength: Int = 8192
    /// The most header lines accepted in one request.
    public var maxHeaderCount: Int = 100
    /// The largest request body read (and thrown away, but for a `POST`'s).
    public var maxBodyBytes: Int = 1 << 20
    /// The largest `POST` body, kept for its handler (`Request.body`): a small
    /// form, such as the operator's sign-in; a longer one gets 413.
    public var maxFormBytes: Int = 8192
    /// The listen backlog.
    public var backlog: Int = 1024
    /// Seconds the kernel holds a new connection that has sent nothing before
    /// the server accepts it (`TCP_DEFER_ACCEPT`, nginx's `listen … deferred`).
    /// A client that sends at once is accepted at once, with its request line
    /// there to be checked at a first look (`FirstLook`); one that sends
    /// nothing costs the server nothing until then. 0 accepts at once.
    public var deferAccept: Int = 1
    /// Seconds a graceful shutdown waits for requests still in flight.
    public var shutdownGrace: Double = 10

    /// The defaults.
    public init() {}
}
