import Foundation
import SystemPackage

/// One walk of `ImageFolder.scan`: the folders on the current path (to see
/// loops), the folders and files already seen (to see them once), and the
/// count of files skipped for not being images. A symbolic link is followed
/// only when it leads inside the folder imported (`root`): a picture is shown
/// from the folder the operator named, never from wherever a link points.
struct FolderWalk {
    /// The folder imported, resolved.
    let root: String
    private var ancestors: [FileID] = []
    private var walked: Set<FileID> = []
    private var imported: Set<FileID> = []
    /// Files skipped for not being images so far.
    private(set) var notImages = 0

    /// A walk of the folder `root` (resolved).
    init(root: String) {
        self.root = root
    }

    /// Walks `folder` (resolved), whose entries are `names`.
    mutating func walk(
        _ folder: String, names: [String], id: FileID,
        facts: (String) -> ImageFacts?, onEntry: (RawEntry) throws -> Void, onProblem: (ImportProblem) -> Void
    ) throws {
        ancestors.append(id)
        walked.insert(id)
        defer { ancestors.removeLast() }
        for name in names.sorted() where !name.hasPrefix(".") {
            try visit(folder + "/" + name, name: name, facts: facts, onEntry: onEntry, onProblem: onProblem)
        }
    }

    /// Looks at the entry `name` at `path`: walks a folder, offers an image, counts anything else.
    private mutating func visit(
        _ path: String, name: String,
        facts: (String) -> ImageFacts?, onEntry: (RawEntry) throws -> Void, onProblem: (ImportProblem) -> Void
    ) throws {
        func problem(_ reason: String) { onProblem(ImportProblem(line: nil, reason: reason)) }
        var info = stat()
        guard lstat(path, &info) == 0 else { return problem("cannot read \(path): \(Errno(rawValue: errno))") }
        var resolved = path
        if FileKind(info) == .link {
            guard stat(path, &info) == 0, let target = ImageFolder.resolvedPath(path) else {
                return problem(Errno(rawValue: errno) == .tooManySymbolicLinkLevels ? "symlink loop at \(path)" : "broken symlink at \(path)")
            }
            guard target == root || target.hasPrefix(root.hasSuffix("/") ? root : root + "/") else {
                return problem("symlink out of the folder at \(path), not followed")
            }
            resolved = target
        }
        switch FileKind(info) {
        case .folder:
            let id = FileID(info)
            if ancestors.contains(id) { return problem("symlink loop at \(path)") }
            // A folder reached again through another link has been walked already.
            guard !walked.contains(id) else { return }
            switch ImageFolder.listing(resolved) {
            case .success(let names):
                try walk(resolved, names: names, id: id, facts: facts, onEntry: onEntry, onProblem: onProblem)
            case .failure(let error):
                problem("cannot read folder \(path): \(error)")
            }
        case .regular:
            guard let mimeType = ImageFolder.mimeType(ofName: name) else {
                notImages += 1
                return
            }
            guard imported.insert(FileID(info)).inserted else { return }
            do {
                try FileDescriptor.open(FilePath(resolved), .readOnly, options: .closeOnExec).close()
            } catch {
                return problem("cannot read \(path): \(error)")
            }
            guard let found = facts(resolved) else { return problem("not a readable image: \(path)") }
            try onEntry(
                ImageFolder.entry(
                    path: resolved, name: name, mimeType: mimeType, facts: found, modified: Self.modified(info)))
        case .link, .other:
            notImages += 1
        }
    }

    /// The modification time in `info`.
    private static func modified(_ info: stat) -> Date {
        #if canImport(Darwin)
        let time = info.st_mtimespec
        #else
        let time = info.st_mtim
        #endif
        return Date(timeIntervalSince1970: TimeInterval(time.tv_sec) + TimeInterval(time.tv_nsec) / 1_000_000_000)
    }
}
