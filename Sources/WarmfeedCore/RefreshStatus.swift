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
}
