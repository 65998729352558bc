import GRDB
import WarmfeedCore

/// An item as a row of SQLite's `item` table, through its `Codable` form:
/// the conformance lives with the store that needs it, so the model
/// (`WarmfeedCore`) and the other stores link no GRDB.
extension FeedItem: FetchableRecord, PersistableRecord {
    /// The table name.
    public static let databaseTableName = "item"
}
