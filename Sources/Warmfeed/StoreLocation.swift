import Foundation
import Logging
import PostgresStore
import SQLiteStore
import WarmfeedCore

/// Where the feed store is, as `--store` (or WARMFEED_STORE) names it:
/// `sqlite:PATH` (the embedded default, `DATA/feed.sqlite`) or
/// `postgres://user:password@host:port/database`.
public enum StoreLocation: Sendable, Equatable, CustomStringConvertible {
    /// One SQLite file.
    case sqlite(path: String)
    /// A PostgreSQL database several servers may share.
    case postgres(PostgresLocation)

    /// Reads `text`; nil is the SQLite file in `dataFolder`.
    public init(_ text: String?, dataFolder: String) throws(ConfigurationError) {
        guard let text, !text.isEmpty else {
            self = .sqlite(path: (dataFolder as NSString).appendingPathComponent("feed.sqlite"))
            return
        }
        let lowered = text.lowercased()
        if lowered.hasPrefix("sqlite:") {
            var path = String(text.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path.removeFirst(2) }
            guard !path.isEmpty else { throw ConfigurationError("--store sqlite:PATH needs a path") }
            self = .sqlite(path: path)
        } else if lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") {
            do {
                self = .postgres(try PostgresLocation(text))
            } catch {
                throw ConfigurationError("--store: \(error)")
            }
        } else {
            let scheme = text.split(separator: ":", maxSplits: 1).first.map(String.init) ?? text
            throw ConfigurationError(
                "--store: unknown store \"\(scheme.prefix(40))\": use sqlite:PATH or postgres://user:password@host:port/database")
        }
    }

    /// The path or host:port/database, with no password.
    public var description: String {
        switch self {
        case .sqlite(let path): "sqlite:\(path)"
        case .postgres(let location): "postgres://\(location)"
        }
    }

    /// Opens the store (creating and migrating it when needed). A PostgreSQL
    /// store that cannot be reached, logged into or found fails within its
    /// connect timeout with a message naming the server.
    ///
    /// A PostgreSQL store opened with `copyFolder` keeps the node's own copy
    /// of the feed's prepared rows there (a serving node's deep pages).
    public func open(copyFolder: String? = nil, logger: Logger) async throws -> any FeedStore {
        switch self {
        case .sqlite(let path):
            let folder = (path as NSString).deletingLastPathComponent
            if !folder.isEmpty { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            return try SQLiteFeedStore(path: path)
        case .postgres(let location):
            let store = try await PostgresFeedStore.open(location, copyFolder: copyFolder, logger: logger)
            if !store.appliedMigrations.isEmpty {
                logger.info("migrated the feed store", metadata: ["store": "\(location)", "migrations": "\(store.appliedMigrations)"])
            }
            return store
        }
    }
}
