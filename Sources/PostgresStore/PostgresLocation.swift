import Foundation

/// Where a PostgreSQL store is, from a URL in libpq's form:
/// `postgres://user:password@host:port/database?sslmode=disable&connect_timeout=5`.
///
/// The user defaults to `postgres`, the port to 5432, the database to the
/// user's name; `sslmode` is `prefer` (TLS when the server offers it, as
/// libpq), `disable` or `require`; `connect_timeout` is in seconds (5).
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    /// The server's host name or address.
    public var host: String
    /// The server's port.
    public var port: Int
    /// The role to log in as.
    public var user: String
    /// The role's password, if it has one.
    public var password: String?
    /// The database holding the feed.
    public var database: String
    /// TLS: disable, prefer or require.
    public var sslMode: SSLMode
    /// How long connecting (and the server's first answer) may take.
    public var connectTimeout: Duration

    /// libpq's TLS modes that make sense here.
    public enum SSLMode: String, Sendable {
        case disable, prefer, require
    }

    /// Why a URL names no PostgreSQL store.
    public struct Problem: Error, CustomStringConvertible, Equatable {
        /// What is wrong with the URL.
        public var description: String
    }

    /// Reads a `postgres://` (or `postgresql://`) URL.
    public init(_ text: String) throws(Problem) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              scheme == "postgres" || scheme == "postgresql"
        else { throw Problem(description: "not a postgres:// URL: \(Self.redacted(text))") }
        guard let host = components.host, !host.isEmpty else {
            throw Problem(description: "the URL names no host: \(Self.redacted(text))")
        }
        self.host = host
        port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw Problem(description: "the port must be from 1 to 65535") }
        user = components.user.flatMap { $0.removingPercentEncoding }.flatMap { $0.isEmpty ? nil : $0 } ?? "postgres"
        password = components.password.flatMap { $0.removingPercentEncoding }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = path.removingPercentEncoding.flatMap { $0.isEmpty ? nil : $0 } ?? user
        sslMode = .prefer
        connectTimeout = .seconds(5)
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let mode = item.value.flatMap(SSLMode.init(rawValue:)) else {
                    throw Problem(description: "sslmode must be disable, prefer or require")
                }
                sslMode = mode
            case "connect_timeout":
                guard let seconds = item.value.flatMap(Int.init), (1...300).contains(seconds) else {
                    throw Problem(description: "connect_timeout must be from 1 to 300 seconds")
                }
                connectTimeout = .seconds(seconds)
            default:
                throw Problem(description: "unknown URL parameter \"\(item.name)\" (known: sslmode, connect_timeout)")
            }
        }
    }

    /// host:port/database, with no password: safe for logs and the admin view.
    public var description: String { "\(host):\(port)/\(database)" }

    /// A URL with its password replaced, for messages.
    static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.password != nil else { return text }
        components.password = "***"
        return components.string ?? "(a URL)"
    }

    /// libpq's connection keywords for the same server, for the connections
    /// that read deep pages on their own threads (`ThreadConnections`).
    var libpqParameters: [(String, String)] { libpqParameters(application: "warmfeed") }

    /// libpq's connection keywords, the connection named `application` in
    /// `pg_stat_activity` (each of the store's kinds of connection has its
    /// own name, so an operator sees which is which). TLS is libpq's own:
    /// `sslmode` is passed as it is.
    func libpqParameters(application: String) -> [(String, String)] {
        var parameters = [("host", host), ("port", "\(port)"), ("user", user), ("dbname", database), ("sslmode", sslMode.rawValue)]
        if let password { parameters.append(("password", password)) }
        parameters.append(("application_name", application))
        return parameters
    }
}
