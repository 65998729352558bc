/// The server's connections, for an operator: how many it holds, and how many
/// it shed since it started, and why. `HTTPServer` counts them and the
/// operator's views show them (`CacheStats.connections` is this type), so the
/// fields are written once, here, below both.
public struct ConnectionCounts: Sendable, Codable, Equatable {
    /// Connections open now.
    public var held: Int
    /// Answered 408 and shut down: a request head began and did not arrive whole within the head timeout.
    public var slowHeads: Int
    /// Idle keep-alive connections closed silently after the head timeout (no byte of a next head arrived).
    public var idleClosed: Int
    /// Shut down while waiting for a head, to make room for a new connection.
    public var madeRoom: Int
    /// New connections closed at once: the server was full and nothing waited.
    public var refused: Int
    /// New connections answered a 4xx and closed at a first look (see `FirstLook`): a malformed request line, a NUL or bare CR
    /// in the head, a `Content-Length` that is not one number, more cookies than the limits.
    public var malformed: Int
    /// Requests waiting now on work that may wait (the store, the origin), their connection suspended.
    public var waiting = 0
    /// Waits answered before their work ended, past the cap on waits of their address or in all (see `SuspendedWaits`).
    public var waitsShed = 0
    /// Waits answered before their work ended, past their deadline.
    public var waitsLate = 0

    public init(held: Int = 0, slowHeads: Int = 0, idleClosed: Int = 0, madeRoom: Int = 0, refused: Int = 0, malformed: Int = 0) {
        self.held = held
        self.slowHeads = slowHeads
        self.idleClosed = idleClosed
        self.madeRoom = madeRoom
        self.refused = refused
        self.malformed = malformed
    }
}
