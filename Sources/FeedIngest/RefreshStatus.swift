import FeedImport
import Foundation

/// What the refresher's imports of the configured source did, as the
/// operator's views show it (`/admin/cache`'s `source`).
public struct RefreshStatus: Codable, Sendable {
    public var source: String
    public var refreshSeconds: Double?
    public var imports = 0
    public var notModified = 0
    public var failures = 0
    public var lastImportAt: String?
    public var lastInserted = 0
    public var lastUpdated = 0
    public var lastProblems = 0
    public var lastError: String?
    /// Another server sharing the store polls the source now (this one waits its turn).
    public var polledElsewhere = false

    /// Nothing imported yet from `source`, refreshed every `refreshSeconds`.
    public init(source: String, refreshSeconds: Double?) {
        self.source = source
        self.refreshSeconds = refreshSeconds
    }

    /// An import ended with `report`.
    mutating func record(_ report: ImportReport) {
        imports += 1
        lastImportAt = Self.now()
        lastError = nil
        if report.notModified {
            notModified += 1
        } else {
            lastInserted = report.written.inserted
            lastUpdated = report.written.updated
            lastProblems = report.skippedCount
        }
    }

    /// An import failed with `error`; the store kept what it had.
    mutating func record(_ error: ImportError) {
        failures += 1
        lastImportAt = Self.now()
        lastError = error.description
    }

    /// Now in ISO 8601, UTC, to the second: `2026-11-01T12:00:00Z`.
    private static func now() -> String {
        ISO8601DateFormatter().string(from: Date())
    }
}
