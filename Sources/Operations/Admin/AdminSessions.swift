import Synchronization

/// The operator's browser sessions: what `/admin?token=` is exchanged for, so
/// the token itself never stays in a URL (history, proxies, access logs) nor
/// in a cookie.
///
/// A session is a random 128-bit id, kept here until it expires (12 hours
/// after it was made), until the operator signs out (`close`), or until newer
/// ones push it out (64 at most: an operator who signs in again and again
/// evicts their own oldest). The ids live in this process: a restart, or
/// another node of a cluster, asks for the token again.
/// Only the admin routes read this, so its one lock is on no reader's path.
package final class AdminSessions: Sendable {
    /// How long a session lasts, in seconds.
    static let lifetime: Double = 12 * 3600
    /// The most sessions kept at once.
    static let capacity = 64

    private let sessions = Mutex<[String: Double]>([:])

    package init() {}

    /// A new session, valid from `now` (seconds of uptime) for `lifetime`.
    func open(now: Double) -> String {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<2).map { _ in
            let half = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - half.count) + half
        }.joined()
        sessions.withLock { sessions in
            sessions = sessions.filter { $0.value > now }
            while sessions.count >= Self.capacity, let oldest = sessions.min(by: { $0.value < $1.value }) { sessions[oldest.key] = nil }
            sessions[id] = now + Self.lifetime
        }
        return id
    }

    /// Ends the session `id` (signing out): it is valid no more, here or in any copy of its cookie.
    func close(_ id: String) {
        sessions.withLock { _ = $0.removeValue(forKey: id) }
    }

    /// Whether `id` names a session still valid at `now`.
    func isOpen(_ id: String, now: Double) -> Bool {
        guard id.utf8.count == 32 else { return false }
        return sessions.withLock { ($0[id] ?? -.infinity) > now }
    }
}
