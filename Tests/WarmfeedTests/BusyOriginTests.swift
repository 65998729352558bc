import Foundation
import HTTPTestClient
import Testing

@testable import Warmfeed

/// A busy origin is not a failed origin: a burst of thumbnails from a healthy
/// origin waits for connections (readers first) instead of timing out into
/// placeholders that are then remembered.
@Suite(.serialized) struct BusyOriginTests {
    @Test func threeHundredThumbnailsAtOnceFromAHealthyOriginAreAllMade() async throws {
        let jpeg = try await OriginImages.jpeg(seed: 9)
        try await withOrigin { origin in
            let paths = (0..<300).map { "/burst\($0).jpg" }
            for path in paths { origin.script(path, .delay(.milliseconds(250), then: .respond(contentType: "image/jpeg", body: jpeg))) }
            // Patient on both sides: this test counts answers, it does not time them. Alone it
            // takes 5 s; in a full run on two cores it took 80 s here, and over 120 s on CI's
            // slower machine, where the server's deadline (and the client's) then cut it short.
            let patience = 600
            let configure: (inout WarmfeedConfiguration) -> Void = {
                $0.allowedOrigins = ServedFeed.loopbackOrigins
                $0.thumbnails.answerWithin = .seconds(patience)
            }
            try await ServedFeed.with(items: 0, configure: configure) { feed in
                let ids = try await feed.addItems(imagesAt: paths, on: origin)
                let port = feed.port
                let statuses = try await withThrowingTaskGroup(of: (status: Int, placeholder: Bool).self) { group in
                    for id in ids {
                        group.addTask {
                            try await onThread {
                                let connection = try TestConnection(port: port, timeout: patience)
                                try connection.send("GET /thumbs/\(id)/1x HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: image/webp\r\n\r\n")
                                let response = try connection.readResponse(head: false)
                                return (response.status, isPlaceholder(response))
                            }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.count == 300)
                #expect(statuses.filter { $0.status != 200 }.isEmpty)
                #expect(statuses.filter(\.placeholder).count == 0, "a healthy origin, busy for a moment, gives no placeholder")
                #expect(paths.allSatisfy { origin.requests(to: $0) == 1 })
                let stats = try await feed.adminJSON()
                #expect(stats["negative_entries"] as? Int == 0, "nothing is remembered as failed")
            }
        }
    }
}
