import Foundation
import ImageFormats
import WarmfeedCore

/// Thumbnails on disk in the data folder, so a restart starts warm.
///
/// Each file is checked on every read (`DiskFiles`): a torn or corrupted
/// file is deleted and reported as a miss, never served. The total size is
/// bounded, and so is the memory of the index of what is on disk
/// (`DiskTierIndex`); past either, the least recently used files go first.
public final class ThumbnailDiskTier: Sendable {
    private let files: DiskFiles

    /// The folder holding the files.
    public var folder: URL { files.folder }

    /// Opens the tier in `folder` (created when missing), indexing the files
    /// already there, oldest first, within `budget` bytes on disk and an index
    /// of `indexBudget` bytes of memory.
    public init(folder: URL, budget: Int, indexBudget: Int = ThumbnailDiskTier.defaultIndexBudget) throws {
        files = try DiskFiles(
            folder: folder, budget: budget, indexBudget: indexBudget,
            name: { packed in ThumbnailKey(packed: packed).map(Self.fileName(of:)) ?? "\(packed.item)-\(packed.tag).unknown" },
            key: { Self.key(fromFileName: $0)?.packed }
        )
    }

    /// The thumbnail for `key` if a valid file holds it; a corrupt file is removed.
    public func read(_ key: ThumbnailKey) -> [UInt8]? {
        key.packed.flatMap(files.read)
    }

    /// Stores the thumbnail for `key`, evicting old files past the budget.
    public func write(_ key: ThumbnailKey, _ bytes: [UInt8]) {
        guard let packed = key.packed else { return }
        files.write(packed, bytes)
    }

    /// The index's memory budget unless one is given: 16 MiB, 393,216 thumbnails
    /// (the default 1 GiB on disk holds as many of 2.7 KB).
    public static let defaultIndexBudget = 16 << 20

    /// What the tier holds and may hold.
    public struct Usage: Sendable, Equatable {
        /// Files and bytes on disk, and the disk budget.
        public var entries = 0, bytes = 0, budget = 0
        /// Corrupt or torn files found (and removed) so far.
        public var corrupt = 0
        /// The memory the index holds now, its budget, and the files it can index at most.
        public var indexBytes = 0, indexBudget = 0, maxEntries = 0

        public init() {}
    }

    /// What the tier holds now.
    public var usage: Usage { files.usage }

    /// `<id>-<tag>-<1x|2x>.<format>`: the picture's name, the variant's and the format's.
    static func fileName(of key: ThumbnailKey) -> String {
        "\(key.picture.name)-\(key.variant.name).\(key.variant.format.rawValue)"
    }

    static func key(fromFileName name: String) -> ThumbnailKey? {
        let parts = name.split(separator: ".")
        guard parts.count == 2, let format = ImageFormat(rawValue: String(parts[1])),
            let dash = parts[0].lastIndex(of: "-"), let picture = Picture(name: parts[0][..<dash]),
            let variant = ThumbnailVariant(name: String(parts[0][parts[0].index(after: dash)...]), format: format)
        else { return nil }
        return ThumbnailKey(picture: picture, variant: variant)
    }
}
