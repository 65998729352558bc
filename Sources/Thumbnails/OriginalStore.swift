import Foundation
import WarmfeedCore

/// Originals kept on disk after their fetch, so that an item's other sizes
/// and formats, asked for minutes later (a dense screen after a plain one, a
/// browser without WebP), are made without asking the origin again: each
/// original is fetched once while it is within the budget. In a cluster the
/// node that fetched an original keeps it here and makes its other variants
/// for the other nodes (see `SharedThumbnailTier.claimOriginal`).
///
/// Checked like the thumbnails' disk tier (`DiskFiles`): a torn or corrupt
/// file is a miss, never an original.
public final class OriginalStore: Sendable {
    private let files: DiskFiles

    /// Opens the store in `folder` (created when missing) within `budget` bytes
    /// on disk; its index holds at most `indexBudget` bytes of memory (about
    /// 40 bytes an original).
    public init(folder: URL, budget: Int, indexBudget: Int = 1 << 20) throws {
        files = try DiskFiles(
            folder: folder, budget: budget, indexBudget: indexBudget,
            name: { "\($0).original" },
            key: { name in
                guard name.hasSuffix(".original"), let id = UInt64(name.dropLast(".original".count)) else { return nil }
                return id
            }
        )
    }

    /// The original of item `itemID`, if a valid file holds it.
    public func read(_ itemID: Int64) -> [UInt8]? {
        guard itemID >= 0 else { return nil }
        return files.read(UInt64(itemID))
    }

    /// Keeps the original of item `itemID`.
    public func write(_ itemID: Int64, _ bytes: [UInt8]) {
        guard itemID >= 0 else { return }
        files.write(UInt64(itemID), bytes)
    }

    /// What the store holds and may hold.
    public var usage: ThumbnailDiskTier.Usage { files.usage }
}
