import Foundation
import Synchronization
import WarmfeedCore

/// The folders of images imported into a store, whose files its items may
/// show: the only files the server reads for a thumbnail.
///
/// Each folder import records its folder (resolved: no symbolic link, no
/// `..`) in the store, beside the items (a note, so `warmfeed import FOLDER`
/// then `warmfeed serve` knows it, and so does every node sharing the store),
/// before it writes a single item. The server adds the folder `--source`
/// names, and reads the store's list again when a file is outside every
/// folder it knows (a folder imported since).
public final class ImportedFolders: Sendable {
    /// The note the folders are kept under, one path a line.
    static let note = "image-folders"
    /// The most folders kept; the oldest are forgotten past it.
    static let limit = 256

    private let store: any FeedStore
    private let configured: [String]
    private let known: Mutex<[String]?> = Mutex(nil)

    /// The folders imported into `store`, and `configured` (a folder source), resolved here.
    public init(store: any FeedStore, configured: [String] = []) {
        self.store = store
        self.configured = configured.compactMap(Self.resolved)
    }

    /// The folders, read from the store the first time and when `refresh`
    /// says so (a store that does not answer gives the configured ones).
    public func folders(refresh: Bool) async -> [String] {
        if !refresh, let known = known.withLock({ $0 }) { return known }
        let recorded = (try? await store.note(Self.note)).map(Self.paths) ?? []
        var all = configured
        for folder in recorded where !all.contains(folder) { all.append(folder) }
        known.withLock { $0 = all }
        return all
    }

    /// Records `folder` (resolved) as imported into `store`.
    static func record(_ folder: String, in store: any FeedStore) async throws {
        guard let path = resolved(folder) else { return }
        var paths = (try await store.note(note)).map(Self.paths) ?? []
        guard !paths.contains(path) else { return }
        paths.append(path)
        try await store.setNote(note, paths.suffix(limit).joined(separator: "\n"))
    }

    /// Copies the record from one store to another (`warmfeed copy-store`).
    static func copy(from source: any FeedStore, to target: any FeedStore) async throws {
        if let value = try await source.note(note) { try await target.setNote(note, value) }
    }

    private static func paths(_ value: String) -> [String] {
        value.split(separator: "\n").map(String.init).filter { $0.hasPrefix("/") }
    }

    /// `path` with every symbolic link and `..` resolved, as the folder walk names its files.
    static func resolved(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
