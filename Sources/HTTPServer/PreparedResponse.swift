/// A response built once and sent many times.
///
/// A page or a thumbnail that is served often is turned into one here, so each
/// request costs no header building and no body copy: the event loop writes
/// `head` and the body. The body stays retained until the last connection
/// sending it is done.
public final class PreparedResponse: Sendable {
    /// The response it was made from.
    public let response: Response
    /// Its status line and header lines as the event loop writes them (`ResponseHead`).
    let head: [UInt8]

    public init(_ response: Response) {
        self.response = response
        var head = [UInt8]()
        ResponseHead.statusAndFields(of: response, into: &head)
        self.head = head
    }
}
