import Glibc
import Reckoning

/// What the server does on a connection's socket outside its worker's reads
/// and writes: a look at a new connection's first bytes, the kernel's count
/// of what an overdue one received, and a last answer written straight to a
/// socket before it is shut down. No state: `ServerCore` decides, under its
/// worker's lock, when each is called.
enum RawSocket {
    /// Looks, without taking them, at the first bytes a new connection sent
    /// (see `FirstLook`). The listening socket defers each accept until bytes
    /// arrive (or a second passes), so a client that sends its head at once is
    /// judged on it here, before its worker reads it.
    /// Also says whether the connection had sent anything yet.
    /// As much is looked at as a connection's read buffer holds.
    static func firstLook(on socket: Int32) -> (FirstLook, sentBytes: Bool) {
        withUnsafeTemporaryAllocation(byteCount: 32 * 1024, alignment: 1) { buffer in
            let count = recv(socket, buffer.baseAddress, buffer.count, Int32(MSG_PEEK | MSG_DONTWAIT))
            guard count > 0 else { return (.fine, false) }
            return (FirstLook(UnsafeRawBufferPointer(rebasing: buffer[..<count])), true)
        }
    }

    /// Reads and drops what a refused connection has sent so far, so that
    /// closing it sends a FIN after the answer and not a reset that could
    /// overtake it.
    static func drain(_ socket: Int32) {
        withUnsafeTemporaryAllocation(byteCount: 16 * 1024, alignment: 1) { buffer in
            var reads = 0
            while reads < 4, recv(socket, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT)) == buffer.count { reads += 1 }
        }
    }

    /// Whether `socket` received bytes of a head during its wait of `interval`,
    /// as the kernel counts them (`TCP_INFO`), read only for a connection
    /// already overdue, so no request pays for it; the bytes themselves are in
    /// the connection's buffer by then, not the socket's.
    ///
    /// On a connection's first wait, any byte it ever received is a head's
    /// (`tcpi_bytes_received`, Linux 4.1 on). After an answer, the kernel's
    /// time since the last data segment must be shorter than the wait, by more
    /// than 50 ms: it counts in jiffies (4 or 10 ms), and the answered request's
    /// own bytes, answered within a jiffy, can look that much younger.
    static func receivedData(on socket: Int32, within interval: Duration, sinceAnAnswer: Bool) -> Bool {
        // Linux's struct tcp_info, read as bytes: glibc's copy of it stops before `tcpi_bytes_received`.
        var info = [UInt8](repeating: 0, count: 232)
        var length = socklen_t(info.count)
        guard getsockopt(socket, Int32(IPPROTO_TCP), TCP_INFO, &info, &length) == 0 else { return false }
        func field<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T? {
            guard Int(length) >= offset + MemoryLayout<T>.size else { return nil }
            return info.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: T.self) }
        }
        if !sinceAnAnswer, let received = field(128, UInt64.self) { return received > 0 }
        guard let lastDataReceived = field(52, UInt32.self) else { return false }
        let waitedMilliseconds = interval.wholeMilliseconds
        return Int64(lastDataReceived) + 50 < waitedMilliseconds
    }

    static let requestTimeout = reply(408, "the request head did not arrive in time\n")

    /// A whole last answer, written straight to a socket its worker has not read.
    static func reply(_ status: Int, _ body: String) -> [UInt8] {
        Array(
            "HTTP/1.1 \(status) \(ResponseHead.reason(for: status))\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
                .utf8)
    }

    /// Writes a last answer on a socket about to be shut down, without
    /// waiting: if it does not fit in the socket's buffer at once, it is not sent.
    static func send(_ bytes: [UInt8], to socket: Int32) {
        _ = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
    }

    /// Shuts a socket down in both directions; its worker then reads
    /// end-of-file and closes the connection. Called with the table locked: a
    /// worker reports a close and closes the descriptor under that lock, so the
    /// number cannot have been reused meanwhile.
    static func shutDown(_ sockets: [Int32]) {
        for socket in sockets { _ = Glibc.shutdown(socket, Int32(SHUT_RDWR)) }
    }
}
