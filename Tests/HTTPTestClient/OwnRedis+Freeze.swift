import Foundation
import Glibc
import Synchronization

extension OwnRedis {
    /// Holds every command until the test calls `thaw`, as a Redis swapped out
    /// would: the server's process is stopped (SIGSTOP) and continued (SIGCONT).
    ///
    /// Not a `CLIENT PAUSE` ended by `CLIENT UNPAUSE`: the pause holds the
    /// unpause too, on any connection that has authenticated.
    public func freezeUntilThawed() throws -> Freeze {
        guard let text = try? String(contentsOfFile: "\(folder)/redis.pid", encoding: .utf8),
            let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), kill(pid, SIGSTOP) == 0
        else { throw Failure(description: "redis-server is not running") }
        return Freeze(pid: pid)
    }

    public final class Freeze: Sendable {
        private let pid: Mutex<pid_t?>

        fileprivate init(pid: pid_t) { self.pid = Mutex(pid) }

        deinit { thaw() }

        /// Lets the server run again (once; later calls do nothing).
        public func thaw() {
            pid.withLock { pid in
                if let stopped = pid { kill(stopped, SIGCONT) }
                pid = nil
            }
        }
    }
}
