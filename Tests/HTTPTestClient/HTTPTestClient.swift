import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A deliberately plain HTTP/1.1 client over a real loopback socket, for tests:
/// it sends exactly the bytes it is given (bad targets, 200 headers, no bytes at
/// all), which a URL-session client would refuse or "fix".
// Sendable only so a test can open connections on a helper thread and hand them
// back; each connection is then used by one task at a time.
public final class TestConnection: @unchecked Sendable {
    /// What went wrong on the socket.
    public struct Failure: Error, CustomStringConvertible {
        /// What happened.
        public var description: String
    }

    private let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to 127.0.0.1:`port`, from the loopback address `source` when
    /// given (another client to the server: 127.0.0.2, …); reads give up after `timeout` seconds.
    public init(port: Int, timeout: Int = 15, from source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket() failed: \(errno)") }
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { throw Failure(description: "bind to \(source) failed: errno \(errno)") }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            // No close(fd) here: a class whose initializer throws once every
            // property is set still runs its deinit, which closes it. Closing it
            // twice closed whatever descriptor took the number meanwhile (a
            // connection libmicrohttpd had just accepted, on another test's
            // server), and libmicrohttpd aborts when its own close fails.
            throw Failure(description: "connect to port \(port) failed: errno \(errno)")
        }
    }

    deinit { close(fd) }

    /// Sends raw bytes.
    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Sends raw bytes.
    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure(description: "send failed: errno \(errno)") }
            offset += sent
        }
    }

    /// Reads one response (headers, then `Content-Length` bytes of body unless `head`).
    public func readResponse(head: Bool = false) throws -> TestResponse {
        var headerEnd: Int?
        while headerEnd == nil {
            headerEnd = buffer.firstRange(of: [13, 10, 13, 10])?.upperBound
            if headerEnd == nil { try fill() }
        }
        let headerText = String(decoding: buffer[..<headerEnd!], as: UTF8.self)
        var lines = headerText.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let status = Int(parts[1]) else { throw Failure(description: "bad status line: \(statusLine)") }
        let headers: [(String, String)] = lines.map { line in
            let colon = line.firstIndex(of: ":") ?? line.endIndex
            return (String(line[..<colon]), String(line[colon...].dropFirst()).trimmingCharacters(in: .whitespaces))
        }
        buffer.removeFirst(headerEnd!)
        var response = TestResponse(status: status, headers: headers, body: [])
        let length = head || status == 304 ? 0 : Int(response.header("Content-Length") ?? "") ?? -1
        if length >= 0 {
            while buffer.count < length { try fill() }
            response.body = Array(buffer[..<length])
            buffer.removeFirst(length)
        } else {
            // No length: the body runs to the end of the connection.
            while (try? fill()) != nil {}
            response.body = buffer
            buffer = []
        }
        return response
    }

    /// Every byte the server sends until it closes the connection, or nil if it
    /// has not closed it within the read timeout.
    public func readUntilClose() -> [UInt8]? {
        var bytes = buffer
        buffer = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 || (n < 0 && errno == ECONNRESET) { return bytes }
            if n < 0 { return nil }
            bytes += chunk[..<n]
        }
    }

    /// Whether the server closed the connection (a read returns end-of-file) within the read timeout.
    public func waitForClose() -> Bool {
        var byte: UInt8 = 0
        while true {
            let n = recv(fd, &byte, 1, 0)
            if n == 0 { return true }
            if n < 0 { return errno == ECONNRESET }
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        var n: Int
        // A signal (a debugger attaching, a profiler) interrupts the wait; it is not the server's answer.
        repeat { n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) } } while n < 0 && errno == EINTR
        if n == 0 { throw Failure(description: "connection closed by the server") }
        if n < 0 { throw Failure(description: "read failed (timeout?): errno \(errno)") }
        buffer.append(contentsOf: chunk[..<n])
    }
}

/// A response as read off the wire.
public struct TestResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Header lines in order.
    public var headers: [(String, String)]
    /// The body bytes (still gzipped when the server gzipped them).
    public var body: [UInt8]

    /// The first value of a header, without regard to case.
    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// One-shot requests on a fresh connection.
public enum TestHTTP {
    /// Sends `method target` with `headers` on a new connection and reads the
    /// response, giving up after `timeout` seconds without a byte.
    public static func request(
        port: Int, _ method: String = "GET", _ target: String, headers: [(String, String)] = [], body: String? = nil, timeout: Int = 15,
        from source: String? = nil
    ) throws -> TestResponse {
        let connection = try TestConnection(port: port, timeout: timeout, from: source)
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body { text += "Content-Length: \(body.utf8.count)\r\n" }
        text += "\r\n" + (body ?? "")
        try connection.send(text)
        return try connection.readResponse(head: method == "HEAD")
    }

    /// A GET.
    public static func get(
        port: Int, _ target: String, headers: [(String, String)] = [], timeout: Int = 15, from source: String? = nil
    ) throws -> TestResponse {
        try request(port: port, "GET", target, headers: headers, timeout: timeout, from: source)
    }
}

/// Runs blocking socket work on a thread of its own, so it never holds one of
/// Swift's few cooperative threads, which the server's async handlers need.
public func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
        }
        thread.start()
    }
}
