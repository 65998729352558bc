#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One connection of the event loop, touched only by its worker's thread.
///
/// Its buffer holds what the client sent and the server has not used yet:
/// heads (as much as libmicrohttpd's connection memory held), a body's
/// bytes, pipelined requests. Its answer, when the socket did not take it
/// whole, waits here until the socket has room.
final class EventConnection {
    enum Phase {
        /// Between requests, or while a head arrives.
        case head
        /// A head was read; its body's `remaining` bytes are still to come.
        case body(ParsedHead, remaining: Int)
        /// The handler's work runs; the answer comes through the mailbox.
        case waiting(isHead: Bool, line: ResponseHead.ConnectionLine)
        /// The answer went and the connection was shut down for writing; what
        /// the client still sends is read and dropped until it closes, or `since` is old.
        case lingering(since: Duration)
        /// The connection is done.
        case closed
    }

    let socket: Int32
    let peer: UInt32
    /// Tells this connection from a later one on the same descriptor.
    let serial: UInt64
    let buffer: UnsafeMutablePointer<UInt8>
    let capacity: Int
    /// The bytes not yet used lie in `buffer[start..<end]`.
    var start = 0
    var end = 0
    /// How far the search for the head's end got (relative to `start`).
    var scanned = 0
    var phase = Phase.head
    /// The body kept for the handler (a `POST`'s), and every byte counted.
    var body: [UInt8] = []
    var keepsBody = false
    /// Whether a request of this connection is counted in flight (`WorkerShard.requestsInFlight`).
    var inFlight = false
    /// Whether the last read left the socket empty: with edge-triggered
    /// epoll, a read is owed only when it did not.
    var drained = false
    /// The client ended its side (read returned 0): answer what is here, then close.
    var readClosed = false
    /// What is left to send of the answer, and whether to close after it.
    var pendingHead: [UInt8] = []
    var pendingHeadSent = 0
    var pendingBody: ResponseBytes?
    var pendingBodySent = 0
    var closesAfterAnswer = false
    /// Seconds (on the worker's clock) of the last byte read or written, for stalls.
    var lastActivity: Duration

    init(socket: Int32, peer: UInt32, serial: UInt64, capacity: Int, now: Duration) {
        self.socket = socket
        self.peer = peer
        self.serial = serial
        self.capacity = capacity
        buffer = .allocate(capacity: capacity)
        lastActivity = now
    }

    deinit { buffer.deallocate() }

    /// Whether part of an answer waits for room in the socket.
    var isWriting: Bool {
        pendingHeadSent < pendingHead.count || (pendingBody.map { pendingBodySent < $0.count } ?? false)
    }

    var isClosed: Bool {
        if case .closed = phase { true } else { false }
    }

    /// Room left at the buffer's end, moving what is unused to its start first when that makes more.
    func makeRoom() -> Int {
        if start > 0, start == end {
            start = 0
            end = 0
        } else if end == capacity, start > 0 {
            memmove(buffer, buffer + start, end - start)
            end -= start
            start = 0
        }
        return capacity - end
    }

    /// Lets go of what the last answer kept.
    func answerSent() {
        pendingHead.removeAll(keepingCapacity: true)
        pendingHeadSent = 0
        pendingBody = nil
        pendingBodySent = 0
    }
}
