import Foundation

/// The token the admin routes ask for.
///
/// Taken from `WARMFEED_ADMIN_TOKEN` when set; otherwise read from, or
/// generated into, `admin-token` in the data folder (mode 0600) so it survives
/// restarts. Compared in constant time, so a timing probe learns nothing.
public struct AdminToken: Sendable {
    /// The token.
    public let value: String
    /// Where it came from, for the start-up message.
    public let source: String

    /// Makes a token from a known value.
    public init(value: String, source: String) {
        self.value = value
        self.source = source
    }

    /// The token from the environment, the data folder, or a new one.
    public static func load(dataFolder: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> AdminToken {
        if let value = environment["WARMFEED_ADMIN_TOKEN"], !value.isEmpty {
            return AdminToken(value: value, source: "WARMFEED_ADMIN_TOKEN")
        }
        let path = (dataFolder as NSString).appendingPathComponent("admin-token")
        if let stored = try? String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), stored.count >= 16 {
            return AdminToken(value: stored, source: path)
        }
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        let value = String((0..<32).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
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
