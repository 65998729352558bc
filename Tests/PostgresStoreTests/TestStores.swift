import Foundation
import Logging
import PostgresWire
import Testing
@testable import PostgresStore
@testable import SQLiteStore
@testable import WarmfeedCore

/// The backends the conformance suite runs against. PostgreSQL is the one
/// the test command starts (`scripts/postgres`), named by
/// WARMFEED_TEST_POSTGRES as an admin URL; each test gets a database of its own.
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    var testDescription: String { rawValue }

    /// The admin URL of the test PostgreSQL, or nil when this run has none.
    static var postgresAdmin: String? {
        ProcessInfo.processInfo.environment["WARMFEED_TEST_POSTGRES"].flatMap { $0.isEmpty || $0 == "skip" ? nil : $0 }
    }

    /// Every backend this run can reach (scripts/test always starts PostgreSQL).
    static var available: [Backend] {
        postgresAdmin == nil ? [.sqlite] : [.sqlite, .postgres]
    }
}

let testLogger: Logger = {
    var logger = Logger(label: "warmfeed.store-test")
    logger.logLevel = .critical
    return logger
}()

/// A fresh, empty store of one backend (a temporary file, or a new database),
/// and a way to open it again as another process or node would.
final class TestStore: Sendable {
    let backend: Backend
    let store: any FeedStore
    /// The SQLite path, or the PostgreSQL URL of the test's own database.
    let address: String
    private let cleanup: @Sendable () async -> Void

    private init(backend: Backend, store: any FeedStore, address: String, cleanup: @escaping @Sendable () async -> Void) {
        self.backend = backend
        self.store = store
        self.address = address
        self.cleanup = cleanup
    }

    static func make(_ backend: Backend) async throws -> TestStore {
        switch backend {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-store-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let path = folder.appendingPathComponent("feed.sqlite").path
            return TestStore(backend: backend, store: try SQLiteFeedStore(path: path), address: path) {
                try? FileManager.default.removeItem(at: folder)
            }
        case .postgres:
            let url = try await TestDatabase.create()
            let store = try await PostgresFeedStore.open(try PostgresLocation(url), queryTimeout: TestStore.patience, logger: testLogger)
            return TestStore(backend: backend, store: store, address: url) {
                await store.close()
                await TestDatabase.drop(url)
            }
        }
    }

    /// How long a test's query may wait for PostgreSQL: not the product's 2 s.
    /// These tests are about what the store answers, not when; a CI run starts
    /// every suite at once on two cores, and a query there once took longer
    /// than 2 s. The fault tests set their own timeouts.
    static let patience: Duration = .seconds(30)

    /// The same store opened again (another process on the file, another node on the database).
    func another() async throws -> any FeedStore {
        switch backend {
        case .sqlite: try SQLiteFeedStore(path: address)
        case .postgres: try await PostgresFeedStore.open(try PostgresLocation(address), queryTimeout: TestStore.patience, logger: testLogger)
        }
    }

    func remove() async { await cleanup() }

    /// Runs `body` with a fresh store of `backend`, always removing it after.
    static func with<T>(_ backend: Backend, _ body: (TestStore) async throws -> T) async throws -> T {
        let made = try await make(backend)
        do {
            let result = try await body(made)
            await made.remove()
            return result
        } catch {
            await made.remove()
            throw error
        }
    }
}

/// Databases of their own on the test PostgreSQL.
enum TestDatabase {
    static func admin() throws -> PostgresLocation {
        guard let url = Backend.postgresAdmin else { throw StoreUnavailable("WARMFEED_TEST_POSTGRES is not set") }
        return try PostgresLocation(url)
    }

    /// Runs `sql` on the admin database.
    static func run(_ sql: String) async throws {
        try withStoreConnection(try admin()) { connection in _ = try connection.run(sql) }
    }

    /// A new empty database; returns its URL.
    static func create() async throws -> String {
        let name = "wf_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased())"
        try await run("CREATE DATABASE \(name)")
        let admin = try admin()
        return "postgres://\(admin.user):\(admin.password ?? "")@\(admin.host):\(admin.port)/\(name)?sslmode=disable"
    }

    static func drop(_ url: String) async {
        guard let database = try? PostgresLocation(url).database else { return }
        try? await run("DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
    }
}

func item(_ n: Int, published: Int64) -> FeedItem {
    FeedItem(guid: "g\(n)", title: "Item \(n)", summary: "", published: published)
}

/// A write from a test's async context, on a thread of its own as the importer writes.
@discardableResult
func upsert(_ store: any FeedStore, _ items: [FeedItem]) async throws -> UpsertSummary {
    try await store.writeOffPool { writer in
        for item in items { try writer.upsert(item) }
    }.1
}
