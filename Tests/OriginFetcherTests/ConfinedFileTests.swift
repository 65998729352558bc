import Foundation
import Testing

@testable import OriginFetcher

/// `file://` fetches with `fileRoots`: only regular files beneath the folders, reached without a symbolic link.
@Suite struct ConfinedFileTests {
    /// A folder with pictures in it, another beside it with a secret, and links from one to the other.
    final class Folders {
        let base: String
        var root: String { base + "/pictures" }
        var outside: String { base + "/outside" }

        init() throws {
            let made = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-confined-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: made.appendingPathComponent("pictures/sub"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: made.appendingPathComponent("outside"), withIntermediateDirectories: true)
            base = try #require(
                realpath(made.path, nil).map { pointer in
                    defer { free(pointer) }
                    return String(cString: pointer)
                })
            try Data(patternBytes(3000, seed: 1)).write(to: URL(fileURLWithPath: root + "/a.jpg"))
            try Data(patternBytes(2000, seed: 2)).write(to: URL(fileURLWithPath: root + "/sub/b c.jpg"))
            try Data("secret".utf8).write(to: URL(fileURLWithPath: outside + "/secret.jpg"))
            let fm = FileManager.default
            try fm.createSymbolicLink(atPath: root + "/out.jpg", withDestinationPath: outside + "/secret.jpg")
            try fm.createSymbolicLink(atPath: root + "/relative-out.jpg", withDestinationPath: "../outside/secret.jpg")
            try fm.createSymbolicLink(atPath: root + "/inside.jpg", withDestinationPath: "a.jpg")
            try fm.createSymbolicLink(atPath: root + "/outdir", withDestinationPath: outside)
            try fm.createSymbolicLink(atPath: root + "/subdir", withDestinationPath: "sub")
            #expect(mkfifo(root + "/pipe.jpg", 0o600) == 0)
        }

        deinit { try? FileManager.default.removeItem(atPath: base) }

        func url(_ path: String) -> String { URL(fileURLWithPath: path).absoluteString }
    }

    @Test func readsFilesBeneathTheFolderAndNothingElse() async throws {
        let folders = try Folders()
        let fetcher = OriginFetcher()
        defer { fetcher.shutdown() }
        // Under a public-only address policy too, as a server fetches: a file has no address to judge.
        let limits = FetchLimits(allowFileScheme: true, addressPolicy: .publicOnly, fileRoots: [folders.base + "/elsewhere", folders.root])
        let body = try await fetcher.fetch(folders.url(folders.root + "/a.jpg"), limits: limits)
        #expect(body.bytes == patternBytes(3000, seed: 1))
        #expect(body.status == 200)
        #expect(try await fetcher.fetch(folders.url(folders.root + "/sub/b c.jpg"), limits: limits).bytes == patternBytes(2000, seed: 2))
        // A download reports the URL asked for, not the descriptor it was read through.
        let target = folders.base + "/copy"
        let download = try await fetcher.download(folders.url(folders.root + "/a.jpg"), to: target, limits: limits)
        #expect(download.finalURL == folders.url(folders.root + "/a.jpg"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == Data(patternBytes(3000, seed: 1)))

        let refused = [
            folders.url(folders.outside + "/secret.jpg"),
            folders.url(folders.root + "/out.jpg"),
            folders.url(folders.root + "/relative-out.jpg"),
            folders.url(folders.root + "/inside.jpg"),
            folders.url(folders.root + "/outdir/secret.jpg"),
            folders.url(folders.root + "/subdir/b c.jpg"),
            folders.url(folders.root + "/pipe.jpg"),
            folders.url(folders.root + "/sub"),
            "file://" + folders.root + "/%2e%2e/outside/secret.jpg",
            "file://" + folders.root + "//a.jpg",
            "file://" + folders.root,
            "file://" + folders.root + "/",
        ]
        for url in refused {
            let failure = await fetcher.result(url, limits: limits).failure
            guard case .fileRefused = failure else {
                Issue.record("\(url) was not refused: \(String(describing: failure))")
                continue
            }
        }
        #expect(await fetcher.result(folders.url(folders.root + "/out.jpg"), limits: limits).failure == .fileRefused(folders.root + "/out.jpg"))
        // The path `..` leads to, once libcurl's parser resolved it, is outside: refused as well.
        let dotted = await fetcher.result("file://" + folders.root + "/../outside/secret.jpg", limits: limits).failure
        #expect(dotted == .fileRefused(folders.outside + "/secret.jpg"))
        #expect(await fetcher.result("file://other.host" + folders.root + "/a.jpg", limits: limits).failure == .invalidURL)
        #expect(await fetcher.result(folders.url(folders.root + "/missing.jpg"), limits: limits).failure?.isConnectionFailed == true)
        #expect(fetcher.stats.refused == refused.count + 2)
        // Without roots (the library's default), a file is read where it is, links and all.
        #expect(try await fetcher.fetch(folders.url(folders.root + "/out.jpg"), limits: FetchLimits(allowFileScheme: true)).bytes == Array("secret".utf8))
        // No roots at all: nothing is beneath them.
        let none = FetchLimits(allowFileScheme: true, fileRoots: [])
        #expect(await fetcher.result(folders.url(folders.root + "/a.jpg"), limits: none).failure == .fileRefused(folders.root + "/a.jpg"))
    }
}
