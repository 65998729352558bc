import CEpoll
import Glibc

/// Answers: written with the body in one call, the rest kept until the
/// socket has room; then the request counted as answered, and the
/// connection kept, lingered on or closed.
extension EventWorker {
    func send(_ connection: EventConnection, _ answer: Answer, isHead: Bool, line: ResponseHead.ConnectionLine) {
        // Once the server stops accepting, a kept connection's next answer is its last, and says so (as nginx's does).
        let line = accepting.load(ordering: .relaxed) ? line : .close
        scratch.removeAll(keepingCapacity: true)
        let body: ResponseBytes
        let status: Int
        switch answer {
        case .prepared(let prepared):
            scratch.append(contentsOf: prepared.head)
            body = prepared.response.body
            status = prepared.response.status.code
        case .response(let response):
            ResponseHead.statusAndFields(of: response, into: &scratch)
            body = response.body
            status = response.status.code
        }
        ResponseHead.appendClosingLines(bodyCount: body.count, status: status, connection: line, date: date.now(), to: &scratch)
        let sendsBody = !isHead && !ResponseHead.isBodiless(status) && body.count > 0
        connection.closesAfterAnswer = line == .close
        let sent: Int = scratch.withUnsafeMutableBytes { head in
            var vectors = (
                iovec(iov_base: head.baseAddress, iov_len: head.count),
                iovec(iov_base: body.base, iov_len: sendsBody ? body.count : 0)
            )
            return withUnsafeMutableBytes(of: &vectors) { vectors in
                var message = msghdr()
                message.msg_iov = vectors.baseAddress!.assumingMemoryBound(to: iovec.self)
                message.msg_iovlen = sendsBody ? 2 : 1
                return sendmsg(connection.socket, &message, Int32(MSG_NOSIGNAL))
            }
        }
        let total = scratch.count + (sendsBody ? body.count : 0)
        if sent == total {
            connection.lastActivity = now
            answered(connection)
            return
        }
        if sent < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR {
            closeConnection(connection)
            return
        }
        let done = max(0, sent)
        if done > 0 { connection.lastActivity = now }
        connection.pendingHead = scratch
        connection.pendingHeadSent = min(done, scratch.count)
        connection.pendingBody = sendsBody ? body : nil
        connection.pendingBodySent = max(0, done - scratch.count)
        watchWrites(connection, true)
    }

    /// Sends what is left of an answer; when all of it went, serves the connection's next request.
    func flush(_ connection: EventConnection) {
        while connection.isWriting {
            let sent: Int
            if connection.pendingHeadSent < connection.pendingHead.count {
                sent = connection.pendingHead.withUnsafeBytes { head in
                    Glibc.send(connection.socket, head.baseAddress! + connection.pendingHeadSent, head.count - connection.pendingHeadSent, Int32(MSG_NOSIGNAL))
                }
                if sent > 0 { connection.pendingHeadSent += sent }
            } else if let body = connection.pendingBody {
                sent = Glibc.send(connection.socket, body.base + connection.pendingBodySent, body.count - connection.pendingBodySent, Int32(MSG_NOSIGNAL))
                if sent > 0 { connection.pendingBodySent += sent }
            } else {
                break
            }
            if sent > 0 {
                connection.lastActivity = now
                continue
            }
            if sent < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
            closeConnection(connection)
            return
        }
        watchWrites(connection, false)
        answered(connection)
        guard !connection.isClosed, case .head = connection.phase else { return }
        service(connection)
    }

    /// The whole answer went: the request is done; the connection goes on, or ends.
    private func answered(_ connection: EventConnection) {
        connection.answerSent()
        shard.connections.withLock { $0.answered(socket: connection.socket, at: now) }
        if connection.inFlight {
            connection.inFlight = false
            shard.requestsInFlight.subtract(1, ordering: .releasing)
        }
        guard connection.closesAfterAnswer else { return }
        if connection.readClosed {
            closeConnection(connection)
            return
        }
        // Shut for writing, then read what the client still sends until it closes (or `lingering` passes).
        _ = shutdown(connection.socket, Int32(SHUT_WR))
        connection.phase = .lingering(since: now)
        connection.start = connection.end
    }

    func closeConnection(_ connection: EventConnection) {
        guard !connection.isClosed else { return }
        if connection.inFlight {
            connection.inFlight = false
            shard.requestsInFlight.subtract(1, ordering: .releasing)
        }
        connection.phase = .closed
        connection.answerSent()
        connections[Int(connection.socket)] = nil
        // Closed with the shard's table locked: the head sweeper shuts sockets down
        // under the same lock, so it never reaches a number the kernel gave out again.
        shard.connections.withLock { table in
            table.closed(socket: connection.socket)
            close(connection.socket)
        }
    }

    /// Closes each connection whose body or answer has stalled past the idle
    /// timeout, and each lingering one past its time. (A head's wait is the
    /// connection table's, swept by the head sweeper; a handler's, `SuspendedWaits`'.)
    func sweepStalls() {
        let idle = Duration.seconds(max(1, core.configuration.idleTimeout))
        for case let connection? in connections {
            switch connection.phase {
            case .lingering(let since):
                if now - since > Self.lingering { closeConnection(connection) }
            case .body:
                if now - connection.lastActivity > idle { closeConnection(connection) }
            case .head:
                if connection.isWriting, now - connection.lastActivity > idle { closeConnection(connection) }
            case .waiting, .closed:
                break
            }
        }
    }
}
