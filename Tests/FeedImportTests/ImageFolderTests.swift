import Foundation
import Testing

@testable import FeedImport

/// A folder under the temporary directory, removed at the end of the test.
private final class TemporaryFolder {
    /// Its resolved path.
    let path: String

    init() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("imagefolder-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        path = try #require(ImageFolder.resolvedPath(base.path))
    }

    deinit {
        _ = chmod(path, 0o755)
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Writes `contents` at `relative`, making the folders on the way.
    @discardableResult
    func file(_ relative: String, _ contents: String = "640x480") throws -> String {
        let full = path + "/" + relative
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(contents.utf8).write(to: URL(fileURLWithPath: full))
        return full
    }

    /// Makes the folder `relative`.
    @discardableResult
    func folder(_ relative: String) throws -> String {
        try FileManager.default.createDirectory(atPath: path + "/" + relative, withIntermediateDirectories: true)
        return path + "/" + relative
    }

    /// Makes a symbolic link at `relative` whose target reads `target`.
    @discardableResult
    func link(_ relative: String, to target: String) throws -> String {
        try FileManager.default.createSymbolicLink(atPath: path + "/" + relative, withDestinationPath: target)
        return path + "/" + relative
    }

    /// The `file://` URL an entry of the file at `relative` has.
    func url(_ relative: String) -> String { URL(fileURLWithPath: path + "/" + relative).absoluteString }
}

/// What one scan gave.
private struct ScannedFolder {
    var metadata: FeedMetadata
    var entries: [RawEntry] = []
    var problems: [ImportProblem] = []
}

/// A stand-in for libvips: a file holding "WxH" (and optionally "@seconds",
/// the time it was taken) is an image of that size; anything else is not.
private func fakeFacts(_ path: String) -> ImageFacts? {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
    let parts = text.split(separator: "@")
    let size = parts[0].split(separator: "x").compactMap { Int($0) }
    guard size.count == 2 else { return nil }
    let taken = parts.count > 1 ? Double(parts[1]).map { Date(timeIntervalSince1970: $0) } : nil
    return ImageFacts(width: size[0], height: size[1], taken: taken)
}

private func scan(_ root: String, facts: (String) -> ImageFacts? = fakeFacts) throws -> ScannedFolder {
    var entries: [RawEntry] = []
    var problems: [ImportProblem] = []
    let metadata = try ImageFolder.scan(
        root, facts: facts, onEntry: { entries.append($0) }, onProblem: { problems.append($0) })
    return ScannedFolder(metadata: metadata, entries: entries, problems: problems)
}

@Suite struct ImageFolderTests {
    @Test func walksNestedFoldersInSortedOrder() throws {
        let folder = try TemporaryFolder()
        for name in ["z.JPEG", "sub/deeper/d.gif", "b.jpg", "sub/c.webp", "a_sub/e.tiff", "a.png"] {
            try folder.file(name)
        }
        let scanned = try scan(folder.path)
        #expect(scanned.entries.map(\.id) == ["a.png", "a_sub/e.tiff", "b.jpg", "sub/c.webp", "sub/deeper/d.gif", "z.JPEG"].map(folder.url))
        #expect(scanned.entries.map(\.images.first?.mimeType) == ["image/png", "image/tiff", "image/jpeg", "image/webp", "image/gif", "image/jpeg"])
        #expect(scanned.problems == [])
        #expect(scanned.metadata == FeedMetadata(format: .imageFolder, title: (folder.path as NSString).lastPathComponent))
        #expect(try scan(folder.path).entries == scanned.entries)
    }

    @Test func makesAnEntryOfAnImage() throws {
        let folder = try TemporaryFolder()
        try folder.file("photos/summer_trip-2024.final.jpg", "4000x3000@1700000000")
        try folder.file("photos/a b#c?.png", "10x20")
        let scanned = try scan(folder.path)
        let url = folder.url("photos/summer_trip-2024.final.jpg")
        #expect(
            scanned.entries.last
                == RawEntry(
                    line: 0, id: url, title: "summer trip 2024.final",
                    images: [ImageCandidate(kind: .own, url: url, width: 4000, height: 3000, mimeType: "image/jpeg")],
                    publishedDate: Date(timeIntervalSince1970: 1_700_000_000)))
        #expect(scanned.entries.first?.id.map { $0.hasSuffix("/photos/a%20b%23c%3F.png") } == true)
        #expect(scanned.entries.first?.title == "a b#c?")
    }

    @Test func datesAnImageWithoutATakenTimeByItsModificationTime() throws {
        let folder = try TemporaryFolder()
        try folder.file("taken.jpg", "1x1@1600000000")
        let plain = try folder.file("untaken.jpg", "1x1")
        let modified = Date(timeIntervalSince1970: 981_173_106)
        try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: plain)
        let scanned = try scan(folder.path)
        #expect(scanned.entries.map(\.publishedDate) == [Date(timeIntervalSince1970: 1_600_000_000), modified])
    }

    @Test func skipsAndCountsFilesThatAreNotImages() throws {
        let folder = try TemporaryFolder()
        for name in ["notes.txt", "README", "clip.mp4", "photo.jpg.txt", "sub/data.json", "kept.heic"] {
            try folder.file(name)
        }
        let scanned = try scan(folder.path)
        #expect(scanned.entries.map(\.title) == ["kept"])
        #expect(scanned.problems == [ImportProblem(line: nil, reason: "skipped 5 files that are not images")])

        let single = try TemporaryFolder()
        try single.file("only.txt")
        #expect(try scan(single.path).problems == [ImportProblem(line: nil, reason: "skipped 1 file that is not an image")])
    }

    @Test func leavesOutHiddenFilesAndFolders() throws {
        let folder = try TemporaryFolder()
        for name in [".hidden.jpg", ".git/objects/x.jpg", ".cache/notes.txt", "visible.avif"] {
            try folder.file(name)
        }
        let scanned = try scan(folder.path)
        #expect(scanned.entries.map(\.title) == ["visible"])
        #expect(scanned.problems == [])
    }

    @Test func reportsASymlinkLoopOnceAndWalksOn() throws {
        let folder = try TemporaryFolder()
        try folder.file("a.jpg")
        try folder.file("sub/b.jpg")
        let up = try folder.link("sub/up", to: "..")
        let scanned = try scan(folder.path)
        #expect(scanned.entries.map(\.id) == [folder.url("a.jpg"), folder.url("sub/b.jpg")])
        #expect(scanned.problems == [ImportProblem(line: nil, reason: "symlink loop at \(up)")])
    }

    @Test func followsLinksWithinTheFolderOnce() throws {
        let folder = try TemporaryFolder()
        try folder.file("originals/real_photo.jpg")
        try folder.file("originals/album/c.png")
        try folder.link("link.jpg", to: "originals/real_photo.jpg")
        try folder.link("same.jpg", to: folder.path + "/originals/real_photo.jpg")
        try folder.link("album", to: "originals/album")
        try folder.link("album again", to: folder.path + "/originals/album")
        let scanned = try scan(folder.path)
        // Each file once, by its own path, whichever way the walk met it first.
        #expect(scanned.entries.map(\.id) == [folder.url("originals/album/c.png"), folder.url("originals/real_photo.jpg")])
        #expect(scanned.entries.map(\.title) == ["c", "link"])
        #expect(scanned.problems == [])
    }

    @Test func followsNoLinkOutOfTheFolder() throws {
        let outside = try TemporaryFolder()
        try outside.file("secret.jpg")
        try outside.file("album/c.png")
        let folder = try TemporaryFolder()
        try folder.file("own.jpg")
        let file = try folder.link("link.jpg", to: outside.path + "/secret.jpg")
        let relative = try folder.link("relative.jpg", to: "../" + (outside.path as NSString).lastPathComponent + "/secret.jpg")
        let album = try folder.link("album", to: outside.path + "/album")
        let root = try folder.link("root", to: "/")
        let scanned = try scan(folder.path)
        #expect(scanned.entries.map(\.id) == [folder.url("own.jpg")])
        #expect(
            scanned.problems == [
                ImportProblem(line: nil, reason: "symlink out of the folder at \(album), not followed"),
                ImportProblem(line: nil, reason: "symlink out of the folder at \(file), not followed"),
                ImportProblem(line: nil, reason: "symlink out of the folder at \(relative), not followed"),
                ImportProblem(line: nil, reason: "symlink out of the folder at \(root), not followed"),
            ])
    }

    @Test func reportsBrokenAndSelfReferringLinks() throws {
        let folder = try TemporaryFolder()
        try folder.file("fine.jpg")
        let dangling = try folder.link("dangling.jpg", to: "nowhere.jpg")
        let circular = try folder.link("me.jpg", to: "me.jpg")
        let scanned = try scan(folder.path)
        #expect(scanned.entries.map(\.title) == ["fine"])
        #expect(
            scanned.problems == [
                ImportProblem(line: nil, reason: "broken symlink at \(dangling)"),
                ImportProblem(line: nil, reason: "symlink loop at \(circular)"),
            ])
    }

    @Test func reportsAnImageItCannotReadAndGoesOn() throws {
        let folder = try TemporaryFolder()
        try folder.file("a.jpg")
        let secret = try folder.file("secret.jpg")
        let broken = try folder.file("truncated.png", "garbage")
        try folder.file("z.jpg")
        #expect(chmod(secret, 0) == 0)
        // Root reads a file whatever its mode; the reader failing stands in for it.
        let asRoot = getuid() == 0
        let scanned = try scan(folder.path, facts: { asRoot && $0 == secret ? nil : fakeFacts($0) })
        #expect(scanned.entries.map(\.title) == ["a", "z"])
        let secretReason = asRoot ? "not a readable image: \(secret)" : "cannot read \(secret): Permission denied"
        #expect(
            scanned.problems == [
                ImportProblem(line: nil, reason: secretReason),
                ImportProblem(line: nil, reason: "not a readable image: \(broken)"),
            ])
    }

    @Test(.disabled(if: getuid() == 0, "root reads any folder whatever its mode"))
    func reportsAFolderItCannotReadAndGoesOn() throws {
        let folder = try TemporaryFolder()
        try folder.file("a.jpg")
        let locked = try folder.folder("locked")
        try folder.file("locked/b.jpg")
        try folder.file("z.jpg")
        #expect(chmod(locked, 0) == 0)
        defer { _ = chmod(locked, 0o755) }
        let scanned = try scan(folder.path)
        #expect(scanned.entries.map(\.title) == ["a", "z"])
        #expect(scanned.problems == [ImportProblem(line: nil, reason: "cannot read folder \(locked): Permission denied")])
    }

    @Test func refusesARootThatIsNotAFolder() throws {
        let folder = try TemporaryFolder()
        let file = try folder.file("a.jpg")
        for root in [folder.path + "/missing", file, ""] {
            #expect(throws: ImportError("no such folder: \(root)")) { try scan(root) }
        }
    }

    @Test func stopsWhenOnEntryThrows() throws {
        struct Stop: Error, Equatable {}
        let folder = try TemporaryFolder()
        for name in ["a.jpg", "b.jpg", "c.jpg"] { try folder.file(name) }
        var delivered = 0
        #expect(throws: Stop()) {
            _ = try ImageFolder.scan(
                folder.path, facts: fakeFacts,
                onEntry: { _ in
                    delivered += 1
                    if delivered == 2 { throw Stop() }
                },
                onProblem: { _ in })
        }
        #expect(delivered == 2)
    }
}
