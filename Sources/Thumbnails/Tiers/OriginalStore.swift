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
            name: { "\($0.picture.name).original" },
            key: { name in
                guard name.hasSuffix(".original"), let picture = Picture(name: name.dropLast(".original".count)) else { return nil }
                return DiskKey(original: picture)
            }
        )
    }

    /// The original of `picture`, if a valid file holds it.
    public func read(_ picture: Picture) -> [UInt8]? {
        DiskKey(original: picture).flatMap(files.read)
    }

    /// Keeps the original of `picture`.
    public func write(_ picture: Picture, _ bytes: [UInt8]) {
        guard let key = DiskKey(original: picture) else { return }
        files.write(key, bytes)
    }

    /// What the store holds and may hold.
    public var usage: ThumbnailDiskTier.Usage { files.usage }
}
