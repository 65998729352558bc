import Foundation
import SystemPackage

/// Reads a folder of images, recursively, into raw entries: one per image,
/// in the order of sorted names, so that two imports of the same folder agree.
///
/// Hidden files and folders (names starting with ".") are left out. Files
/// whose extension is not an image's are skipped and counted in one problem
/// at the end ("skipped 3 files that are not images"). Symbolic links are
/// followed within the folder only: a link that leads out of it is reported
/// and not followed (the server reads no file outside the folders imported),
/// a link back to a folder being walked is reported once as a loop and not
/// followed, a folder reached a second time through a link is not walked
/// again, and a file reached twice is imported once.
public enum ImageFolder {
    /// The extensions offered to the image reader (lowercased), with their MIME types.
    public static let imageTypes: [String: String] = [
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "webp": "image/webp", "gif": "image/gif",
        "tif": "image/tiff", "tiff": "image/tiff", "heic": "image/heic", "avif": "image/avif",
    ]

    /// Walks the folder at `root`, asking `facts` about each image file (by its
    /// resolved path; nil means not a readable image) and calling `onEntry`
    /// with each image it can read, `onProblem` with each one it cannot.
    ///
    /// An entry's id and image URL are the `file://` URL of the file's resolved
    /// path; its title is the file name without extension, `_` and `-` read as
    /// spaces; its date is when the picture was taken, else the file's
    /// modification time.
    ///
    /// Throws `ImportError` when `root` is not a folder that can be read; an
    /// error thrown by `onEntry` stops the walk and is rethrown unchanged.
    public static func scan(
        _ root: String,
        facts: (String) -> ImageFacts?,
        onEntry: (RawEntry) throws -> Void,
        onProblem: (ImportProblem) -> Void
    ) throws -> FeedMetadata {
        var info = stat()
        guard let resolved = resolvedPath(root), stat(resolved, &info) == 0, FileKind(info) == .folder else {
            throw ImportError("no such folder: \(root)")
        }
        var walk = FolderWalk(root: resolved)
        let names: [String]
        switch listing(resolved) {
        case .success(let found): names = found
        case .failure(let reason): throw ImportError("cannot read folder \(root): \(reason)")
        }
        try walk.walk(resolved, names: names, id: FileID(info), facts: facts, onEntry: onEntry, onProblem: onProblem)
        if walk.notImages > 0 {
            let files = walk.notImages == 1 ? "1 file that is not an image" : "\(walk.notImages) files that are not images"
            onProblem(ImportProblem(line: nil, reason: "skipped \(files)"))
        }
        return FeedMetadata(format: .imageFolder, title: (resolved as NSString).lastPathComponent)
    }

    /// The entry of the image at `path` (resolved), listed as `name`.
    static func entry(path: String, name: String, mimeType: String, facts: ImageFacts, modified: Date) -> RawEntry {
        let url = URL(fileURLWithPath: path).absoluteString
        var title = String(name[..<(name.lastIndex(of: ".") ?? name.endIndex)])
        let spaced = title.replacingOccurrences(of: "_", with: " ").replacingOccurrences(of: "-", with: " ")
            .trimmingCharacters(in: .whitespaces)
        if !spaced.isEmpty { title = spaced }
        return RawEntry(
            line: 0, id: url, title: title,
            images: [ImageCandidate(kind: .own, url: url, width: facts.width, height: facts.height, mimeType: mimeType)],
            publishedDate: facts.taken ?? modified)
    }

    /// The MIME type of an image file named `name`, or nil when it is not an image's name.
    static func mimeType(ofName name: String) -> String? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        return imageTypes[name[name.index(after: dot)...].lowercased()]
    }

    /// `path` with every symbolic link and `..` resolved, or nil when it does not lead anywhere.
    static func resolvedPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The names in `folder` (without "." and ".."), or why they cannot be read.
    static func listing(_ folder: String) -> Result<[String], Errno> {
        guard let directory = opendir(folder) else { return .failure(Errno(rawValue: errno)) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return .success(names)
    }
}

/// A file's identity whatever the path that reached it: device and inode.
struct FileID: Hashable {
    var device: UInt64
    var inode: UInt64

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}

/// The kinds of file a walk tells apart.
enum FileKind {
    case folder, regular, link, other

    init(_ info: stat) {
        switch info.st_mode & S_IFMT {
        case S_IFDIR: self = .folder
        case S_IFREG: self = .regular
        case S_IFLNK: self = .link
        default: self = .other
        }
    }
}
