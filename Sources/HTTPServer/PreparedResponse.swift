import CMicroHTTPD
import Synchronization

/// A response built once and sent many times.
///
/// A page or a thumbnail that is served often is turned into one here, so each
/// request costs no header building and no body copy: the server's own loop
/// writes `head` and the body; libmicrohttpd's queues one reference-counted
/// response of its own on any number of connections at once, made the first
/// time that loop sends this. The body stays retained until the last
/// connection sending it is done.
public final class PreparedResponse: Sendable {
    /// The response it was made from.
    public let response: Response
    /// Its status line and header lines as the event loop writes them (`ResponseHead`).
    let head: [UInt8]
    /// The libmicrohttpd response's address once made (0 before): immutable once
    /// built, and libmicrohttpd counts its references under its own lock.
    private let madeForMHD = Atomic<UInt>(0)

    public init(_ response: Response) {
        self.response = response
        var head = [UInt8]()
        ResponseHead.statusAndFields(of: response, into: &head)
        self.head = head
    }

    /// The libmicrohttpd response, made the first time it is asked for (two
    /// threads asking at once both make one, and one is kept); nil only when
    /// out of memory. Never asked for on the server's own loop.
    var mhdResponse: OpaquePointer? {
        let made = madeForMHD.load(ordering: .acquiring)
        if made != 0 { return OpaquePointer(bitPattern: made) }
        guard let new = ServerCore.makeMHDResponse(response) else { return nil }
        let (kept, other) = madeForMHD.compareExchange(
            expected: 0, desired: UInt(bitPattern: Int(bitPattern: new)), ordering: .acquiringAndReleasing)
        if kept { return new }
        MHD_destroy_response(new)
        return OpaquePointer(bitPattern: other)
    }

    deinit {
        if let made = OpaquePointer(bitPattern: madeForMHD.load(ordering: .acquiring)) { MHD_destroy_response(made) }
    }
}
