import Foundation
import HTTPTestClient
import Testing

@testable import Warmfeed
@testable import WarmfeedCore

/// Work a request starts is bounded: its wait has a deadline and a cap (per
/// address and in all), and the encodes it may start are the cheap ones its
/// `Accept` takes (issue 34).
@Suite struct ThumbnailWaitTests {
    static let webp = [("Accept", "image/webp,*/*")]

    static func isLate(_ response: TestResponse) -> Bool {
        response.status == 200 && response.header("X-Warmfeed-Placeholder") == "late" && response.header("Cache-Control") == "no-store"
    }

    @Test func aWaitPastItsDeadlineGetsAnEmptyBoxAndTheJobGoesOnForTheNextReader() async throws {
        let jpeg = try await OriginImages.jpeg(seed: 41)
        try await withOrigin { origin in
            origin.script("/slow.jpg", .delay(.seconds(4), then: .respond(contentType: "image/jpeg", body: jpeg)))
            try await ServedFeed.with(
                items: 0,
                configure: {
                    $0.prewarm.pages = 0
                    $0.thumbnails.answerWithin = .seconds(1)
                    $0.allowedOrigins = ServedFeed.loopbackOrigins
                }
            ) { feed in
                let id = try await feed.addItems(imagesAt: ["/slow.jpg"], on: origin)[0]
                let first = try await feed.get("/thumbs/\(id)/1x", headers: Self.webp)
                #expect(Self.isLate(first), "the origin takes longer than the wait")
                // The job went on: the next reader gets the picture from the same one fetch.
                var next = first
                for _ in 0..<100 where Self.isLate(next) {
                    try await Task.sleep(for: .milliseconds(200))
                    next = try await feed.get("/thumbs/\(id)/1x", headers: Self.webp)
                }
                #expect(next.header("Content-Type") == "image/webp")
                #expect(origin.requests(to: "/slow.jpg") == 1)
                let connections = try #require(try await feed.adminJSON()["connections"] as? [String: Any])
                #expect((connections["waits_late"] as? Int ?? 0) >= 1)
                #expect(try await feed.adminJSON()["failures"] as? Int == 0, "a late answer is no failure")
            }
        }
    }

    /// One address's crowd of cold thumbnails behind a slow origin: past the
    /// cap its oldest waits are answered at once, and another client is served.
    @Test func aCrowdOfWaitsIsShedPastItsCapAndAnotherClientIsServed() async throws {
        let jpeg = try await OriginImages.jpeg(seed: 42)
        try await withOrigin { origin in
            let paths = (0..<24).map { "/crowd-\($0).jpg" }
            for path in paths { origin.script(path, .delay(.seconds(3), then: .respond(contentType: "image/jpeg", body: jpeg))) }
            let configure: (inout WarmfeedConfiguration) -> Void = { configuration in
                configuration.prewarm.pages = 0
                configuration.allowedOrigins = ServedFeed.loopbackOrigins
                configuration.http.threads = 1
                // Half of 32 connections: at most 16 waits at once, the oldest shed from the
                // address that holds the most (this crowd's, never the other client's).
                configuration.http.connectionLimit = 32
                // Long, but under the client's 60 s: on a machine loaded enough to pass
                // it, a wait ends late by its deadline, counted apart from the shed.
                configuration.thumbnails.answerWithin = .seconds(45)
            }
            try await ServedFeed.with(items: 0, configure: configure) { feed in
                let ids = try await feed.addItems(imagesAt: paths, on: origin)
                let answers = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                    for id in ids { group.addTask { try await feed.get("/thumbs/\(id)/1x", headers: Self.webp) } }
                    return try await group.reduce(into: [TestResponse]()) { $0.append($1) }
                }
                let connections = try #require(try await feed.adminJSON()["connections"] as? [String: Any])
                let pastDeadline = connections["waits_late"] as? Int ?? 0
                #expect(connections["waits_shed"] as? Int == ids.count - 16, "all but the cap's 16 were answered without waiting")
                #expect(answers.filter(Self.isLate).count == ids.count - 16 + pastDeadline)
                #expect(answers.filter { $0.header("Content-Type") == "image/webp" }.count == 16 - pastDeadline)
                // Another address is answered whatever this one does.
                #expect(try await feed.get("/", from: "127.0.0.2").status == 200)
            }
        }
    }

    @Test func aRequestStartsOnlyTheCheapEncodesItsAcceptTakesAndHonoursQuality() async throws {
        let jpeg = try await OriginImages.jpeg(seed: 43)
        try await withOrigin { origin in
            origin.script("/q.jpg", .respond(contentType: "image/jpeg", body: jpeg))
            try await ServedFeed.with(
                items: 0,
                configure: {
                    $0.prewarm.pages = 0; $0.allowedOrigins = ServedFeed.loopbackOrigins
                }
            ) { feed in
                let id = try await feed.addItems(imagesAt: ["/q.jpg"], on: origin)[0]
                // WebP refused by quality: JPEG.
                let jpegAnswer = try await feed.get("/thumbs/\(id)/1x", headers: [("Accept", "image/webp;q=0, image/jpeg")])
                #expect(jpegAnswer.header("Content-Type") == "image/jpeg")
                // JPEG preferred by quality over WebP: JPEG, though the WebP costs the same to make.
                let preferred = try await feed.get("/thumbs/\(id)/2x", headers: [("Accept", "image/webp;q=0.5, image/jpeg;q=0.9")])
                #expect(preferred.header("Content-Type") == "image/jpeg")
                // A browser that takes AVIF and WebP gets the WebP now; the AVIF is made behind it, never for this request.
                let browser = try await feed.get("/thumbs/\(id)/1x", headers: [("Accept", "image/avif,image/webp,*/*")])
                #expect(browser.header("Content-Type") == "image/webp")
                #expect(origin.requests(to: "/q.jpg") == 1)
            }
        }
    }
}
