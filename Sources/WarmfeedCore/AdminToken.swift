import Foundation

/// The token the admin routes ask for.
///
/// Taken from `WARMFEED_ADMIN_TOKEN` when set; otherwise read from, or
/// generated into, `admin-token` in the data folder (mode 0600) so it survives
/// restarts. Compared in constant time, so a timing probe learns nothing.
/// Whatever its source, it is at least `minimumLength` characters: there is
/// no default token, and a short one is refused at start.
public struct AdminToken: Sendable {
    /// The token.
    public let value: String
    /// Where it came from, for the start-up message.
    public let source: String

    /// The fewest characters a token may have: 32 (a generated one has 32
    /// letters and digits, about 187 bits; `openssl rand -hex 32` gives 64 hex digits).
    public static let minimumLength = 32

    /// A token refused: too short. Names where it came from, never the token.
    public struct Refused: Error, CustomStringConvertible {
        /// What is wrong, naming the source and the rule.
        public var description: String
    }

    /// Makes a token from a known value.
    public init(value: String, source: String) {
        self.value = value
        self.source = source
    }

    /// Refuses `value` (from `source`, as the message names it) when it is shorter than `minimumLength`.
    public static func check(_ value: String, from source: String) throws(Refused) {
        guard value.count < minimumLength else { return }
        throw Refused(
            description:
                "\(source) is \(value.count) characters long: an admin token must be at least \(minimumLength) characters (make one with `openssl rand -hex 32`)"
        )
    }

    /// The token from the environment, the data folder, or a new one; a
    /// token shorter than `minimumLength` from either is refused.
    public static func load(dataFolder: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> AdminToken {
        if let value = environment["WARMFEED_ADMIN_TOKEN"], !value.isEmpty {
            try check(value, from: "WARMFEED_ADMIN_TOKEN")
            return AdminToken(value: value, source: "WARMFEED_ADMIN_TOKEN")
        }
        let path = (dataFolder as NSString).appendingPathComponent("admin-token")
        if let stored = try? String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), !stored.isEmpty {
            try check(stored, from: "the token in \(path)")
            return AdminToken(value: stored, source: path)
        }
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        let value = String((0..<minimumLength).map { _ in alphabet.randomElement(using: &generator)! })
        FileManager.default.createFile(atPath: path, contents: Data((value + "\n").utf8), attributes: [.posixPermissions: 0o600])
        return AdminToken(value: value, source: path)
    }

    /// Whether `candidate` is the token, in time that does not depend on where they differ.
    public func matches(_ candidate: String) -> Bool {
        let a = Array(value.utf8)
        let b = Array(candidate.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }
}
