import Foundation
import HTTPTestClient
import Testing
@testable import Warmfeed
@testable import WarmfeedCore

/// Every bad input of the issue gets a clear 4xx with a short message, and the server stays up.
@Suite struct BadInputTests {
    @Test func badPagesCursorsRoutesAndPathsGetClear4xx() async throws {
        try await ServedFeed.with(items: 95, pageSize: 10) { feed in
            let first = RenderedPage(try await feed.get("/").text)
            let next = try #require(first.sentinel).next
            let token = String(next.split(separator: "=").last!)
            let otherFeed = Cursor(epoch: feed.app.store.epoch &+ 1, published: 1, id: 1).token

            let cases: [(String, Int, String)] = [
                ("/?page=0", 400, "page must be a whole number"),
                ("/?page=-1", 400, "page must be a whole number"),
                ("/?page=abc", 400, "page must be a whole number"),
                ("/?page=1e9", 400, "page must be a whole number"),
                ("/?page=99999999999999999999", 400, "page must be a whole number"),
                ("/?page=", 400, "page must be a whole number"),
                ("/?page=1&page=2", 400, "more than once"),
                ("/fragment?page=0", 400, "page must be a whole number"),
                ("/?page=2&after=garbage", 400, "malformed"),
                ("/?page=2&after=" + String(token.dropLast(4)), 400, "malformed"),
                ("/fragment?page=2&after=%ZZ", 400, "percent-encoding"),
                ("/?page=2&after=" + otherFeed, 410, "another version"),
                ("/fragment?page=2&after=" + otherFeed, 410, "another version"),
                ("/?page=99999", 404, "no such page"),
                ("/no/such/route", 404, "not found"),
                ("/static/../Package.swift", 400, "dot segments"),
                ("/static/%2e%2e%2fPackage.swift", 400, "dot segments"),
                ("/%2e%2e%2f%2e%2e%2fetc/passwd", 400, "dot segments"),
                ("/static/feed.js%00.png", 400, "NUL"),
                ("/?page=%00", 400, "NUL"),
                ("/static/nope.js", 404, "no such static file"),
            ]
            for (target, status, message) in cases {
                let response = try await feed.get(target)
                #expect(response.status == status, "\(target)")
                #expect(response.text.contains(message), "\(target): \(response.text.prefix(200))")
                #expect(response.body.count < 4096, "\(target): the message is short")
            }
            // Fragments answer in plain text, documents with an HTML error page.
            #expect(try await feed.get("/fragment?page=abc").header("Content-Type") == "text/plain; charset=utf-8")
            #expect(try await feed.get("/?page=abc").header("Content-Type") == "text/html; charset=utf-8")
            #expect(try await feed.get("/").status == 200)
        }
    }

    @Test func oversizedRequestsAndWrongMethods() async throws {
        try await ServedFeed.with(items: 20) { feed in
            let long = try await feed.get("/?page=1&pad=" + String(repeating: "x", count: 16 * 1024))
            #expect(long.status == 414)
            let port = feed.port
            let crowded = try await onThread { try TestHTTP.get(port: port, "/", headers: (0..<200).map { ("X-Filler-\($0)", "1") }) }
            #expect(crowded.status == 431)
            for target in ["/", "/fragment", "/static/feed.js"] {
                for method in ["POST", "PUT", "DELETE"] {
                    let response = try await feed.request(method, target, body: method == "DELETE" ? nil : "x=1")
                    #expect(response.status == 405, "\(method) \(target)")
                    #expect(response.header("Allow") == "GET, HEAD", "\(method) \(target)")
                }
            }
            #expect(try await feed.get("/").status == 200)
        }
    }

    @Test func aThousandSilentConnectionsDoNotStopTheFeed() async throws {
        try await ServedFeed.with(items: 20) { feed in
            let port = feed.port
            let silent = try await onThread { try (0..<1000).map { _ in try TestConnection(port: port, timeout: 20) } }
            let response = try await feed.get("/")
            #expect(response.status == 200)
            #expect(RenderedPage(response.text).rows.count == 10)
            withExtendedLifetime(silent) {}
        }
    }
}
