import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Something on a loopback port that reads Redis commands and answers them
/// as the test says, however a real Redis never would: garbage, replies too
/// large to hold, a drip that never ends, or a faithful imitation for
/// the few commands a test needs. It counts the connections its client
/// dropped while it was still sending, so a test sees the client let go.
///
/// One thread per connection, plain POSIX sockets. Call `stop()` when done.
// @unchecked Sendable: every mutable field is read and written under `lock`.
public final class HostileRedis: @unchecked Sendable {
    /// What is sent back for one command.
    public enum Answer: Sendable {
        /// These bytes, at once.
        case send([UInt8])
        /// `head`, then `count` bytes of filler as fast as the client takes them.
        case flood(head: [UInt8], count: Int)
        /// `head`, then one filler byte every `interval`, until the client leaves.
        case drip(head: [UInt8], interval: Duration)
        /// Nothing at all (the connection stays open).
        case silence
    }

    /// The port it listens on (127.0.0.1).
    public let port: Int
    private let listener: Int32
    private let lock = NSCondition()
    private var answer: @Sendable ([String]) -> Answer
    private var received: [[String]] = []
    private var dropped = 0
    private var sockets: [Int32] = []
    private var live = 0
    private var stopped = false

    /// Listens on a free loopback port; `answer` says what each command gets.
    public init(answer: @escaping @Sendable ([String]) -> Answer) throws {
        self.answer = answer
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestConnection.Failure(description: "socket() failed: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw TestConnection.Failure(description: "bind/listen on loopback failed: errno \(errno)")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        live = 1
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// `redis://127.0.0.1:PORT/0`, with `password` when given.
    public func url(password: String? = nil) -> String {
        "redis://\(password.map { ":\($0)@" } ?? "")127.0.0.1:\(port)/0"
    }

    /// Says what later commands get.
    public func answer(with answer: @escaping @Sendable ([String]) -> Answer) {
        locked { self.answer = answer }
    }

    /// Every command read so far, as words.
    public var commands: [[String]] { locked { received } }

    /// Connections the client closed while an answer was still being sent (or silent).
    public var droppedByClient: Int { locked { dropped } }

    /// Closes everything and waits (a few seconds at most) for the threads to end.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        if !stopped {
            stopped = true
            shutdown(listener, Int32(SHUT_RDWR))
            for socket in sockets { shutdown(socket, Int32(SHUT_RDWR)) }
        }
        let deadline = Date(timeIntervalSinceNow: 5)
        while live > 0, lock.wait(until: deadline) {}
    }

    /// `$N\r\n`: a bulk string's head announcing `count` bytes.
    public static func bulkHead(_ count: Int) -> [UInt8] { Array("$\(count)\r\n".utf8) }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    private func acceptLoop() {
        while true {
            let socket = acceptClosingOnExec(listener)
            if socket < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                break
            }
            let admitted = locked { () -> Bool in
                guard !stopped else { return false }
                sockets.append(socket)
                live += 1
                return true
            }
            guard admitted else {
                close(socket)
                break
            }
            let thread = Thread { [self] in serve(socket) }
            thread.start()
        }
        close(listener)
        locked {
            live -= 1
            lock.broadcast()
        }
    }

    private func serve(_ socket: Int32) {
        var buffer: [UInt8] = []
        defer {
            close(socket)
            locked {
                sockets.removeAll { $0 == socket }
                live -= 1
                lock.broadcast()
            }
        }
        while let command = readCommand(socket, &buffer) {
            let answer = locked { () -> Answer in
                received.append(command)
                return self.answer(command)
            }
            guard send(answer, on: socket) else {
                locked { dropped += 1 }
                return
            }
        }
    }

    /// Sends `answer`; false when the client left before it was all sent.
    private func send(_ answer: Answer, on socket: Int32) -> Bool {
        switch answer {
        case .send(let bytes):
            return write(socket, bytes)
        case .flood(let head, let count):
            guard write(socket, head) else { return false }
            let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 64 << 10)
            var left = count
            while left > 0 {
                guard write(socket, Array(chunk.prefix(left))) else { return false }
                left -= min(left, chunk.count)
            }
            return true
        case .drip(let head, let interval):
            guard write(socket, head) else { return false }
            while !locked({ stopped }) {
                Thread.sleep(forTimeInterval: Double(interval.components.attoseconds) / 1e18 + Double(interval.components.seconds))
                guard write(socket, [UInt8(ascii: "x")]) else { return false }
            }
            return false
        case .silence:
            // Until the client closes (or the server stops): a read of 0 or an error.
            var byte: UInt8 = 0
            while recv(socket, &byte, 1, 0) > 0 {}
            return false
        }
    }

    /// Reads one command (an array of bulk strings, as every client sends them); nil at the end.
    private func readCommand(_ socket: Int32, _ buffer: inout [UInt8]) -> [String]? {
        guard let head = readLine(socket, &buffer), head.first == "*", let count = Int(head.dropFirst()), count >= 0 else { return nil }
        var words: [String] = []
        for _ in 0..<count {
            guard let line = readLine(socket, &buffer), line.first == "$", let length = Int(line.dropFirst()), length >= 0 else { return nil }
            while buffer.count < length + 2 {
                guard fill(socket, &buffer) else { return nil }
            }
            words.append(String(decoding: buffer[..<length], as: UTF8.self))
            buffer.removeFirst(length + 2)
        }
        return words
    }

    private func readLine(_ socket: Int32, _ buffer: inout [UInt8]) -> String? {
        while true {
            if let end = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<end], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                buffer.removeFirst(end + 1)
                return line
            }
            guard fill(socket, &buffer) else { return nil }
        }
    }

    private func fill(_ socket: Int32, _ buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = recv(socket, &chunk, chunk.count, 0)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            buffer += chunk[..<count]
            return true
        }
    }

    private func write(_ socket: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }
}
