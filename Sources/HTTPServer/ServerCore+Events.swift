import HTTPTypes

/// What the event loop asks of the core: a new connection judged and
/// entered in its worker's table, and a request handed to the handler.
extension ServerCore {
    /// A connection `socket` from `address` opened on worker `shard`: entered in
    /// its table (which may shed others to make room, or this one), and its
    /// first bytes looked at (`FirstLook`). A connection shed or refused is shut
    /// down here, with its answer if it earned one; its worker then reads its end.
    func opened(socket: Int32, address: UInt32, shard index: Int) {
        let now = ContinuousClock.now - started
        let (look, sentBytes) = RawSocket.firstLook(on: socket)
        shards[index].connections.withLock { table in
            let shed = table.opened(socket: socket, address: address, at: now, began: sentBytes)
            RawSocket.shutDown(shed)
            if let (status, message) = look.answer, !shed.contains(socket) {
                table.malformed(socket: socket)
                RawSocket.drain(socket)
                RawSocket.send(RawSocket.reply(status, message + "\n"), to: socket)
                RawSocket.shutDown([socket])
            }
        }
    }

    /// The handler's reply to the request of `head` (its target and method
    /// checked here first), with `body` (a `POST`'s, or empty).
    func reply(to head: ParsedHead, body: [UInt8], peer: UInt32) -> Reply {
        let target: RequestTarget
        do {
            target = try RequestTarget.parse(head.target, maxLength: configuration.maxTargetLength)
        } catch {
            return .now(.problem(error))
        }
        guard let method = HTTPRequest.Method(head.method) else { return .now(.plain(400, "bad method")) }
        return handler(Request(method: method, path: target.path, query: target.query, fields: head.lines.fields, peer: peer, body: body))
    }
}
