/// Where Redis listens: `redis://[:password@]host[:port][/db]`, read the way
/// redis-cli's `-u` reads it.
public struct RedisLocation: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var database: Int
    public var password: String?

    /// Reads `url`; a message for the operator that names what is wrong otherwise.
    public init(_ url: String) throws(RedisError) {
        guard url.hasPrefix("redis://") else {
            throw .badLocation("\(url): only redis://host:port/db is understood")
        }
        var rest = Substring(url.dropFirst("redis://".count))
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            // redis://:password@ or redis://user:password@ (a user is ignored: Redis 5 has none).
            let password = credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).last.map(String.init) ?? ""
            self.password = password.isEmpty ? nil : password
        } else {
            password = nil
        }
        let hostPort: Substring
        if let slash = rest.firstIndex(of: "/") {
            hostPort = rest[..<slash]
            let db = rest[rest.index(after: slash)...]
            if db.isEmpty {
                database = 0
            } else if let number = Int(db), (0...15).contains(number) {
                database = number
            } else {
                throw .badLocation("\(url): the database must be a number from 0 to 15, not \(db)")
            }
        } else {
            hostPort = rest
            database = 0
        }
        let parts = hostPort.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let first = parts.first, !first.isEmpty else {
            throw .badLocation("\(url): no host")
        }
        host = String(first)
        if parts.count == 2 {
            guard let number = Int(parts[1]), (1...65535).contains(number) else {
                throw .badLocation("\(url): the port must be a number from 1 to 65535, not \(parts[1])")
            }
            port = number
        } else {
            port = 6379
        }
        guard host.utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else { throw .badLocation("\(url): the host has spaces or control characters") }
    }

    /// The location without its password, for logs and the admin view.
    public var description: String { "redis://\(host):\(port)/\(database)" }
}
