import Foundation
import HTTPTestClient
import Testing

@testable import OriginFetcher

/// Good origins: bodies, connection reuse and caps, redirects, schemes.
@Suite struct FetchTests {
    @Test func fetchesBytesStatusAndContentType() async throws {
        try await withOrigin { origin, fetcher in
            let image = patternBytes(200_000)
            origin.script("/image.jpg", .respond(contentType: "image/jpeg", body: image))
            let body = try await fetcher.fetch(origin.url("/image.jpg"))
            #expect(body.status == 200)
            #expect(body.contentType == "image/jpeg")
            #expect(body.bytes == image)
            #expect(body.redirects == 0)
            let head = try #require(origin.lastRequest(to: "/image.jpg"))
            #expect(head.contains("User-Agent: \(OriginFetcher.userAgent)"))
            #expect(!head.lowercased().contains("accept-encoding"))
            let stats = fetcher.stats
            #expect(stats.started == 1 && stats.finished == 1 && stats.failed == 0 && stats.inFlight == 0)
        }
    }

    @Test func sequentialFetchesReuseOneConnection() async throws {
        try await withOrigin { origin, fetcher in
            origin.script("/a", .respond(body: patternBytes(10_000, seed: 1)))
            origin.script("/b", .respond(body: patternBytes(20_000, seed: 2)))
            for round in 0..<6 {
                let path = round.isMultiple(of: 2) ? "/a" : "/b"
                let body = try await fetcher.fetch(origin.url(path))
                #expect(body.bytes.count == (path == "/a" ? 10_000 : 20_000))
            }
            #expect(origin.requests(to: "/a") == 3)
            #expect(origin.requests(to: "/b") == 3)
            #expect(origin.connectionsAccepted == 1)
        }
    }

    @Test func concurrentFetchesStayUnderThePerHostCap() async throws {
        try await withOrigin(fetcher: OriginFetcher(maxConnectionsPerHost: 2)) { origin, fetcher in
            origin.script("/slow", .delay(.milliseconds(300), then: .respond(body: patternBytes(5000))))
            let bodies = await withTaskGroup(of: Int?.self) { group in
                for _ in 0..<6 { group.addTask { await fetcher.result(origin.url("/slow")).body?.bytes.count } }
                return await group.reduce(into: [Int?]()) { $0.append($1) }
            }
            #expect(bodies == Array(repeating: 5000, count: 6))
            #expect(origin.requests(to: "/slow") == 6)
            #expect(origin.peakConcurrentRequests <= 2)
            #expect(origin.peakOpenConnections <= 2)
            #expect(origin.connectionsAccepted <= 2)
        }
    }

    @Test func followsUpToThreeRedirects() async throws {
        try await withOrigin { origin, fetcher in
            origin.script("/r1", .redirect(to: "/r2"))
            origin.script("/r2", .redirect(to: origin.url("/r3"), status: 301))
            origin.script("/r3", .redirect(to: "/final", status: 307))
            origin.script("/final", .respond(contentType: "image/png", body: [1, 2, 3]))
            let body = try await fetcher.fetch(origin.url("/r1"))
            #expect(body.bytes == [1, 2, 3])
            #expect(body.contentType == "image/png")
            #expect(body.redirects == 3)

            origin.script("/r0", .redirect(to: "/r1"))
            #expect(await fetcher.result(origin.url("/r0")).failure == .tooManyRedirects)
            #expect(origin.requests(to: "/final") == 1)
        }
    }

    @Test func aRedirectLoopEnds() async throws {
        try await withOrigin { origin, fetcher in
            origin.script("/loop", .redirect(to: "/loop"))
            #expect(await fetcher.result(origin.url("/loop")).failure == .tooManyRedirects)
            #expect(origin.requests(to: "/loop") == 4)
        }
    }

    @Test func redirectsNeverLeaveHTTP() async throws {
        try await withOrigin { origin, fetcher in
            origin.script("/to-ftp", .redirect(to: "ftp://127.0.0.1/secret"))
            origin.script("/to-file", .redirect(to: "file:///etc/passwd"))
            #expect(await fetcher.result(origin.url("/to-ftp")).failure == .schemeNotAllowed)
            let fileAllowed = FetchLimits(allowFileScheme: true)
            #expect(await fetcher.result(origin.url("/to-file"), limits: fileAllowed).failure == .schemeNotAllowed)
        }
    }

    @Test(arguments: [
        "ftp://127.0.0.1/file", "gopher://127.0.0.1/1", "file:///etc/passwd", "FILE:///etc/passwd",
        "dict://127.0.0.1/x", "ldap://127.0.0.1/",
    ])
    func refusesSchemesOtherThanHTTP(url: String) async {
        let fetcher = OriginFetcher()
        defer { fetcher.shutdown() }
        #expect(await fetcher.result(url).failure == .schemeNotAllowed)
        #expect(fetcher.stats.failed == 1)
        #expect(fetcher.stats.started == 0)
    }

    @Test(arguments: ["", "not a url", "http://", "://nothing", "http://exa mple.com/", "http://127.0.0.1/\u{0}x"])
    func refusesWhatIsNotAURL(url: String) async {
        let fetcher = OriginFetcher()
        defer { fetcher.shutdown() }
        #expect(await fetcher.result(url).failure == .invalidURL)
    }

    @Test func readsLocalFilesOnlyWhenAllowed() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("warmfeed-fetch-\(UUID().uuidString).bin").path
        let bytes = patternBytes(50_000)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fetcher = OriginFetcher()
        defer { fetcher.shutdown() }

        #expect(await fetcher.result("file://\(path)").failure == .schemeNotAllowed)
        let allowed = FetchLimits(allowFileScheme: true)
        let body = try await fetcher.fetch("file://\(path)", limits: allowed)
        #expect(body.bytes == bytes)
        #expect(body.status == 200)
        #expect(await fetcher.result("file://\(path).missing", limits: allowed).failure?.isConnectionFailed == true)
        let small = FetchLimits(maxBodyBytes: 1000, allowFileScheme: true)
        #expect(await fetcher.result("file://\(path)", limits: small).failure == .tooLarge)
    }
}
