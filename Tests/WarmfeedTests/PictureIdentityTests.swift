import Foundation
import HTTPTestClient
import Testing

@testable import Thumbnailer
@testable import Warmfeed
@testable import WarmfeedCore

/// A picture is always its item's picture now: thumbnails and originals are
/// kept by picture (the item, and a digest of its image URL in its store), so
/// neither a store replaced under a used data folder nor an item whose image
/// URL changed is ever shown another picture (issue 34).
@Suite struct PictureIdentityTests {
    static let webp = [("Accept", "image/webp,*/*")]

    @Test func anItemWhoseImageChangesIsShownItsNewPictureAndTheOldIsLetGo() async throws {
        let (first, second) = (try await OriginImages.jpeg(seed: 11), try await OriginImages.jpeg(seed: 12))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-picture-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await withOrigin { origin in
            origin.script("/a.jpg", .respond(contentType: "image/jpeg", body: first))
            origin.script("/b.jpg", .respond(contentType: "image/jpeg", body: second))
            let feed = try await ServedFeed.start(items: 0, dataFolder: folder) {
                $0.prewarm.pages = 0; $0.allowedOrigins = ServedFeed.loopbackOrigins
            }
            let id = try await feed.addItems(imagesAt: ["/a.jpg"], on: origin)[0]
            let before = try #require(try await feed.thumbnailPaths().first)
            let old = try await feed.get(before, headers: Self.webp)
            #expect(old.header("Content-Type") == "image/webp")

            // The source now gives the item another image.
            let item = try #require(try await feed.app.store.item(id: id))
            var changed = item
            changed.id = nil
            changed.imageURL = origin.url("/b.jpg")
            try feed.app.store.upsert([changed])
            let after = try #require(try await feed.thumbnailPaths().first)
            #expect(after != before, "the page names the new picture")
            #expect(after.hasPrefix("/thumbs/\(id)-"))
            let new = try await feed.get(after, headers: Self.webp)
            #expect(new.header("Content-Type") == "image/webp")
            #expect(new.body != old.body, "the new picture, not the one kept for the old")
            #expect(origin.requests(to: "/b.jpg") == 1)
            // An address of the old picture (a page from before) names that picture: memory
            // may still hold it; once it does not, it is sent on to the new one (below).
            let stale = try await feed.get(before, headers: Self.webp)
            #expect(stale.body == old.body || stale.status == 307)
            // A bare id is its picture now.
            #expect(try await feed.get("/thumbs/\(id)/1x", headers: Self.webp).body == new.body)
            await feed.stop(keepingData: true)

            // On disk, the new picture took the old one's place: one file for the item's 1x.
            let kept = try FileManager.default.contentsOfDirectory(atPath: folder + "/thumbs").filter { $0.hasPrefix("\(id)-") && $0.hasSuffix("-1x.webp") }
            #expect(kept == [String(after.dropFirst("/thumbs/".count).dropLast("/1x".count)) + "-1x.webp"])

            // Restarted with the origin scripted to fail: the disk answers, with the new picture only.
            origin.script("/a.jpg", .respond(status: 500, body: []))
            origin.script("/b.jpg", .respond(status: 500, body: []))
            let restarted = try await ServedFeed.start(items: 0, dataFolder: folder) {
                $0.prewarm.pages = 0; $0.allowedOrigins = ServedFeed.loopbackOrigins
            }
            #expect(try await restarted.get(after, headers: Self.webp).body == new.body)
            let moved = try await restarted.get(before, headers: Self.webp)
            #expect(moved.status == 307 && moved.header("Location") == after, "the old picture's address leads to the new one")
            #expect(origin.requests(to: "/a.jpg") == 1, "the old picture was never fetched again")
            await restarted.stop()
        }
    }

    /// The issue's case: a folder imported and viewed; the store removed; a
    /// folder of other pictures, under the same names, imported into the same
    /// data folder. Every thumbnail is the new folder's, as a fresh data folder shows it.
    @Test func aStoreReplacedUnderAUsedDataFolderShowsOnlyItsOwnPictures() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-replaced-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let pictures = root.appendingPathComponent("pictures")
        try FileManager.default.createDirectory(at: pictures, withIntermediateDirectories: true)
        let names = (1...6).map { "picture-\($0).jpg" }
        func paint(seedBase: UInt64) async throws {
            for (index, name) in names.enumerated() {
                try Data(try await OriginImages.jpeg(seed: seedBase + UInt64(index))).write(to: pictures.appendingPathComponent(name))
            }
        }
        func thumbnails(data: URL) async throws -> [[UInt8]] {
            let feed = try await ServedFeed.start(items: 0, dataFolder: data.path) { configuration in
                configuration.prewarm.pages = 0
                configuration.sources = [pictures.path]
            }
            guard case .success = await feed.app.importSources().first else {
                Issue.record("the folder did not import")
                await feed.stop(keepingData: true)
                return []
            }
            var bodies: [[UInt8]] = []
            for path in try await feed.thumbnailPaths() {
                let response = try await feed.get(path, headers: Self.webp)
                #expect(response.header("Content-Type") == "image/webp", "\(path)")
                bodies.append(response.body)
            }
            await feed.stop(keepingData: true)
            return bodies
        }
        let used = root.appendingPathComponent("data")
        try await paint(seedBase: 100)
        let red = try await thumbnails(data: used)
        #expect(red.count == names.count)

        // The store goes; the thumbnails and originals on disk stay. Other pictures, same names.
        for suffix in ["", "-wal", "-shm", "-rows"] { try? FileManager.default.removeItem(at: used.appendingPathComponent("feed.sqlite" + suffix)) }
        try await paint(seedBase: 200)
        let blue = try await thumbnails(data: used)
        let fresh = try await thumbnails(data: root.appendingPathComponent("fresh"))
        #expect(blue.count == names.count)
        #expect(Set(blue) == Set(fresh), "the used data folder shows what a fresh one does")
        #expect(Set(blue).isDisjoint(with: Set(red)), "no picture of the store before")
    }

    /// A picture's name is its item and a digest of its store's epoch, its
    /// image URL and size: another of any of them is another picture.
    @Test func aPicturesTagFollowsItsStoreItsURLAndItsSize() {
        let item = FeedItem(id: 5, guid: "g", title: "t", summary: "", imageURL: "https://img.example/a.jpg", imageWidth: 800, imageHeight: 600, published: 0)
        let picture = Picture(item: item, epoch: 1)!
        #expect(Picture(name: picture.name) == picture)
        #expect(picture.name.hasPrefix("5-") && picture.name.count == 10)
        var moved = item
        moved.imageURL = "https://img.example/b.jpg"
        var resized = item
        resized.imageWidth = 801
        let others = [Picture(item: item, epoch: 2)!, Picture(item: moved, epoch: 1)!, Picture(item: resized, epoch: 1)!]
        #expect(Set(others.map(\.tag)).count == 3 && !others.map(\.tag).contains(picture.tag))
        var none = item
        none.imageURL = nil
        #expect(Picture(item: none, epoch: 1) == nil)
        for bad in ["5", "5-", "-0000abcd", "5-0000abc", "5-0000ABCD", "5-0000abcdx", "0-0000abcd", "x-0000abcd"] {
            #expect(Picture(name: bad) == nil, "\(bad)")
        }
    }
}
