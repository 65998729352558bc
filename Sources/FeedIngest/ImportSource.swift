import FeedImport
import Foundation

/// What `warmfeed import SOURCE` (or `serve --source`) names: a feed on the
/// web, a feed file, or a folder of images.
public enum ImportSource: Sendable, Equatable, CustomStringConvertible {
    /// An `http(s)` URL of a feed.
    case url(String)
    /// A feed file on disk.
    case file(String)
    /// A folder of images, imported recursively.
    case folder(String)

    /// Reads `text` as a URL when it has an http(s) scheme, else as a path
    /// (a `file://` URL too); a path must exist.
    public init(_ text: String) throws(ImportError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let lower = trimmed.lowercased()
        if Self.isWebAddress(trimmed) {
            guard URL(string: trimmed)?.host != nil else { throw ImportError("not a URL: \(trimmed)") }
            self = .url(trimmed)
            return
        }
        if lower.contains("://"), !lower.hasPrefix("file://") {
            throw ImportError("only http, https and file sources can be imported: \(trimmed)")
        }
        let path = lower.hasPrefix("file://") ? (URL(string: trimmed)?.path ?? "") : trimmed
        var isFolder: ObjCBool = false
        guard !path.isEmpty, FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw ImportError("no such file or folder: \(path)")
        }
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        self = isFolder.boolValue ? .folder(absolute) : .file(absolute)
    }

    /// Whether `text` (trimmed) names an http(s) URL: told from the text
    /// alone, with no look at the disk.
    static func isWebAddress(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("http://") || lower.hasPrefix("https://")
    }

    public var description: String {
        switch self {
        case .url(let url): url
        case .file(let path), .folder(let path): path
        }
    }
}
