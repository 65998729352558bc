/// The server's connections, for an operator: how many it holds, and how many
/// it shed since it started, and why.
public struct ConnectionCounts: Sendable, Codable, Equatable {
    /// Connections open now.
    public var held: Int
    /// Shut down for not sending a whole request head within the head timeout.
    public var slowHeads: Int
    /// Shut down while waiting for a head, to make room for a new connection.
    public var madeRoom: Int
    /// New connections closed at once: the server was full and nothing waited.
    public var refused: Int
    /// New connections answered 400 and closed at a first look: a malformed request line, or a NUL or bare CR in the head.
    public var malformed: Int

    public init(held: Int = 0, slowHeads: Int = 0, madeRoom: Int = 0, refused: Int = 0, malformed: Int = 0) {
        self.held = held
        self.slowHeads = slowHeads
        self.madeRoom = madeRoom
        self.refused = refused
        self.malformed = malformed
    }
}
