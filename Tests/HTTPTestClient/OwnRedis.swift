import Foundation
import Glibc

/// A real `redis-server` of a test's own, on a free loopback port, in a
/// temporary folder: stopped and started again under the code being tested.
public final class OwnRedis: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let port: Int
    public let folder: String
    /// The password it asks for (`requirepass`), when it asks for one.
    public let password: String?

    /// Whether Debian's redis-server is installed (`scripts/setup --tests` installs it).
    public static var available: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-server") }

    /// Starts one on a free port: one this process's own server answers on.
    ///
    /// A port found free may be taken again before the server binds it (a
    /// port another test's Redis let go while it was stopped, to be started
    /// again): the daemon then exits, and another test's Redis answers the
    /// PING. Two tests sharing one Redis lose each other's keys when one
    /// restarts it, so the server that answers must be this one (its process
    /// id is the one in this folder's pid file), or another port is tried.
    public init(password: String? = nil) throws {
        self.password = password
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-redis-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var failure: any Error = Failure(description: "no free port for redis-server")
        for _ in 0..<5 {
            let candidate = try Self.freePort()
            do {
                try Self.launch(port: candidate, folder: folder, password: password)
                port = candidate
                return
            } catch {
                failure = error
            }
        }
        throw failure
    }

    deinit { remove() }

    /// `redis://[:password@]127.0.0.1:PORT/0`.
    public var url: String { "redis://\(password.map { ":\($0)@" } ?? "")127.0.0.1:\(port)/0" }

    /// Starts the server again on the same port (after `stop`), and waits until it answers.
    public func start() throws {
        try Self.launch(port: port, folder: folder, password: password)
    }

    /// Starts a server on `port` in `folder` and waits until it, and no other, answers.
    private static func launch(port: Int, folder: String, password: String?) throws {
        let status = try Self.run(
            "/usr/bin/redis-server",
            [
                "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--daemonize", "yes", "--pidfile", "\(folder)/redis.pid", "--dir", folder,
                "--logfile", "\(folder)/redis.log", "--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru",
            ] + (password.map { ["--requirepass", $0] } ?? [])
        ).status
        guard status == 0 else { throw Failure(description: "redis-server did not start (status \(status)); see \(folder)/redis.log") }
        for _ in 0..<200 {
            let info = try? Self.run("/usr/bin/redis-cli", ["-p", String(port)] + authentication(password) + ["INFO", "server"])
            if let info, info.status == 0, let line = info.output.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("process_id:") }) {
                let answering = line.dropFirst("process_id:".count).trimmingCharacters(in: .whitespaces)
                let ours = (try? String(contentsOfFile: "\(folder)/redis.pid", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                if answering == ours { return }
                // Ours could not bind: the one answering is another's.
                if (try? String(contentsOfFile: "\(folder)/redis.log", encoding: .utf8))?.contains("Address already in use") == true {
                    throw Failure(description: "port \(port) is another redis-server's (process \(answering))")
                }
            }
            usleep(50_000)
        }
        throw Failure(description: "redis-server on port \(port) did not answer within 10 s; see \(folder)/redis.log")
    }

    /// Stops the server (SIGKILL: nothing is saved, as with a crash) and waits until its port refuses.
    public func stop() {
        guard let text = try? String(contentsOfFile: "\(folder)/redis.pid", encoding: .utf8),
            let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else { return }
        kill(pid, SIGKILL)
        for _ in 0..<200 where kill(pid, 0) == 0 { usleep(20_000) }
        try? FileManager.default.removeItem(atPath: "\(folder)/redis.pid")
    }

    /// Stops it and removes its folder.
    public func remove() {
        stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Runs `redis-cli` against it and returns what it printed.
    @discardableResult
    public func cli(_ arguments: String...) throws -> String {
        let (status, output) = try Self.run("/usr/bin/redis-cli", ["-p", String(port)] + Self.authentication(password) + arguments)
        guard status == 0 else { throw Failure(description: "redis-cli \(arguments.joined(separator: " ")) failed: \(output)") }
        return output
    }

    /// Makes the server hold every other client's commands for `seconds`
    /// (`CLIENT PAUSE`), as a Redis swapping or saving would.
    public func freeze(seconds: Double) throws {
        try cli("CLIENT", "PAUSE", String(Int(seconds * 1000)), "ALL")
    }

    /// redis-cli's arguments for `password`.
    private static func authentication(_ password: String?) -> [String] {
        password.map { ["-a", $0, "--no-auth-warning"] } ?? []
    }

    /// Runs a program to its end (posix_spawn and waitpid: Foundation's Process
    /// waits on a run loop that never turns in an async test), its output in a file.
    private static func run(_ program: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-redis-out-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, output.path, O_WRONLY | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        closeInheritedDescriptors(&actions)
        let argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, program, &actions, nil, argv, environ) == 0 else { throw Failure(description: "cannot run \(program)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        return (status, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }

    /// A loopback port free now (bound to port 0, read, and let go).
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw Failure(description: "bind on loopback failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
