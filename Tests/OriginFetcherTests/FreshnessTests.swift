import Foundation
import HTTPTestClient
import Testing

@testable import OriginFetcher

/// What a download hears of freshness over a real loopback origin, and the
/// statuses a poller passes (429, 503) coming back as answers, with no file.
@Suite struct FreshnessTests {
    static let limits = FetchLimits(totalTimeout: .seconds(60))
    static let throttles: Set<Int> = [429, 503]
    static let receivedAt = ResponseFreshnessTests.receivedAt
    /// An origin's clock that is 25 years slow: nothing may depend on it.
    static let originDate = "Mon, 01 Jan 2001 00:00:00 GMT"

    @Test func freshnessHeadersAreParsed() async throws {
        try await withOrigin { origin, fetcher in
            try await withScratchDirectory { directory in
                origin.script(
                    "/max-age",
                    .respond(
                        body: [1],
                        headers: [
                            "Cache-Control: public, s-maxage=9999", "Cache-Control: max-age=600", "Age: 100",
                            "Date: \(Self.originDate)", "Expires: Mon, 01 Jan 2001 00:00:10 GMT",
                        ]))
                let download = try await fetcher.download(origin.url("/max-age"), to: directory + "/a", limits: Self.limits)
                #expect(download.status == 200 && Disk.bytes(directory + "/a") == [1])
                #expect(download.freshness == ResponseFreshness(maxAge: 600, age: 100, expires: 978_307_210, date: 978_307_200))
                // max-age less Age, not Expires less Date.
                #expect(download.freshness.freshFor(receivedAt: Self.receivedAt) == 500)

                origin.script(
                    "/expires",
                    .respond(
                        body: [2],
                        headers: [
                            "Date: \(Self.originDate)", "Expires: Mon, 01 Jan 2001 01:00:00 GMT", "Age: 60",
                        ]))
                let expiring = try await fetcher.download(origin.url("/expires"), to: directory + "/b", limits: Self.limits)
                #expect(expiring.freshness.freshFor(receivedAt: Self.receivedAt) == 3540)

                origin.script("/no-store", .respond(body: [3], headers: ["Cache-Control: max-age=600", "cache-control: NO-STORE"]))
                let uncached = try await fetcher.download(origin.url("/no-store"), to: directory + "/c", limits: Self.limits)
                #expect(uncached.freshness.noStore && uncached.freshness.freshFor(receivedAt: Self.receivedAt) == 0)

                origin.script("/silent", .respond(body: [4]))
                let silent = try await fetcher.download(origin.url("/silent"), to: directory + "/d", limits: Self.limits)
                #expect(silent.freshness == ResponseFreshness() && silent.freshness.freshFor(receivedAt: Self.receivedAt) == nil)
            }
        }
    }

    @Test(arguments: [
        ("0", "Sun, 06 Nov 1994 08:49:37 GMT"), ("-1", "Sun, 06 Nov 1994 08:49:37 GMT"), ("tomorrow", "Sun, 06 Nov 1994 08:49:37 GMT"),
    ])
    func anInvalidExpiresIsStaleAtOnce(_ expires: String, _ date: String) async throws {
        try await withOrigin { origin, fetcher in
            try await withScratchDirectory { directory in
                origin.script("/feed", .respond(body: [1], headers: ["Date: \(date)", "Expires: \(expires)"]))
                let download = try await fetcher.download(origin.url("/feed"), to: directory + "/f", limits: Self.limits)
                #expect(download.freshness.expiresIsInvalid && download.freshness.expires == nil)
                #expect(download.freshness.freshFor(receivedAt: Self.receivedAt) == 0)
            }
        }
    }

    @Test(arguments: ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"])
    func httpDatesInAllThreeForms(_ text: String) async throws {
        try await withOrigin { origin, fetcher in
            try await withScratchDirectory { directory in
                origin.script("/feed", .respond(body: [1], headers: ["Date: \(text)", "Expires: \(text)", "Retry-After: \(text)"]))
                let download = try await fetcher.download(origin.url("/feed"), to: directory + "/f", limits: Self.limits)
                let instant = HTTPDateTests.example
                #expect(download.freshness == ResponseFreshness(expires: instant, date: instant, retryAfter: .date(instant)))
            }
        }
    }

    @Test func garbageOverflowAndRepeatsReadAsNothing() async throws {
        try await withOrigin { origin, fetcher in
            try await withScratchDirectory { directory in
                origin.script(
                    "/garbage",
                    .respond(
                        body: [1],
                        headers: [
                            "Cache-Control: max-age=-5, max-age=\u{7f}", "Age: 1e9", "Date: yesterday", "Retry-After: soon",
                        ]))
                let garbage = try await fetcher.download(origin.url("/garbage"), to: directory + "/a", limits: Self.limits)
                #expect(garbage.freshness == ResponseFreshness())

                let huge = String(repeating: "9", count: 400)
                origin.script("/huge", .respond(body: [2], headers: ["Cache-Control: max-age=\(huge)", "Age: \(huge)", "Retry-After: \(huge)"]))
                let large = try await fetcher.download(origin.url("/huge"), to: directory + "/b", limits: Self.limits)
                let limit = ResponseFreshness.maxDeltaSeconds
                #expect(large.freshness == ResponseFreshness(maxAge: limit, age: limit, retryAfter: .seconds(limit)))
                #expect(large.freshness.freshFor(receivedAt: Self.receivedAt) == 0)
                #expect(large.freshness.retryAt(receivedAt: Self.receivedAt) == Self.receivedAt + Int64(limit))

                // A header that may be sent once, sent twice, means nothing (an Expires: stale).
                origin.script(
                    "/twice",
                    .respond(
                        body: [3],
                        headers: [
                            "Cache-Control: max-age=60", "Cache-Control: max-age=3600", "Age: 5", "Age: 5",
                            "Date: \(Self.originDate)", "Date: \(Self.originDate)", "Retry-After: 7", "Retry-After: 8",
                            "Expires: \(Self.originDate)", "Expires: \(Self.originDate)",
                        ]))
                let twice = try await fetcher.download(origin.url("/twice"), to: directory + "/c", limits: Self.limits)
                #expect(twice.freshness == ResponseFreshness(expiresIsInvalid: true))

                // A Cache-Control longer than the bound is not read at all, whatever hides in it.
                let padding = String(repeating: "x", count: JoinedField.maxBytes)
                origin.script("/long", .respond(body: [4], headers: ["Cache-Control: max-age=60", "Cache-Control: no-store, \(padding)"]))
                let long = try await fetcher.download(origin.url("/long"), to: directory + "/d", limits: Self.limits)
                #expect(long.freshness == ResponseFreshness())
            }
        }
    }

    @Test func a429WithRetryAfterSecondsComesBackWhenPassed() async throws {
        try await withOrigin { origin, fetcher in
            try await withScratchDirectory { directory in
                origin.script("/feed", .respond(status: 429, contentType: "text/plain", body: Array("slow down".utf8), headers: ["Retry-After: 7"]))
                let path = directory + "/feed"
                let download = try await fetcher.download(origin.url("/feed"), to: path, limits: Self.limits, passing: Self.throttles)
                #expect(download.status == 429 && !download.notModified && download.bytes == 0)
                #expect(download.freshness.retryAfter == .seconds(7))
                #expect(download.freshness.retryAt(receivedAt: Self.receivedAt) == Self.receivedAt + 7)
                #expect(download.finalURL == origin.url("/feed"))
                #expect(Disk.listing(directory).isEmpty)

                // Not passed, it is an error as it always was.
                let refused = await fetcher.downloadResult(origin.url("/feed"), to: path, limits: Self.limits)
                #expect(refused.failure == .httpStatus(429))
                let other = await fetcher.downloadResult(origin.url("/feed"), to: path, limits: Self.limits, passing: [503])
                #expect(other.failure == .httpStatus(429))
                #expect(Disk.listing(directory).isEmpty)
                #expect(fetcher.stats.finished == 1 && fetcher.stats.failed == 2)
            }
        }
    }

    @Test func a503WithAnHTTPDateRetryAfterIsCountedFromItsDate() async throws {
        try await withOrigin { origin, fetcher in
            try await withScratchDirectory { directory in
                origin.script(
                    "/feed",
                    .respond(
                        status: 503, contentType: "text/html", body: patternBytes(20_000),
                        headers: [
                            "Date: \(Self.originDate)", "Retry-After: Mon, 01 Jan 2001 00:02:00 GMT",
                        ]))
                let path = directory + "/feed"
                let download = try await fetcher.download(origin.url("/feed"), to: path, limits: Self.limits, passing: Self.throttles)
                #expect(download.status == 503 && download.bytes == 0)
                // Two minutes after the origin's Date is two minutes after receipt, whatever its clock.
                #expect(download.freshness.retryAt(receivedAt: Self.receivedAt) == Self.receivedAt + 120)
                #expect(Disk.listing(directory).isEmpty)

                let refused = await fetcher.downloadResult(origin.url("/feed"), to: path, limits: Self.limits)
                #expect(refused.failure == .httpStatus(503))
            }
        }
    }

    @Test func aPassedStatusLeavesTheHeldCopyUntouched() async throws {
        try await withOrigin { origin, fetcher in
            try await withScratchDirectory { directory in
                let bytes = patternBytes(10_000)
                origin.script("/feed", .respond(body: bytes))
                let path = directory + "/feed"
                _ = try await fetcher.download(origin.url("/feed"), to: path, limits: Self.limits)
                let modified = try #require(Disk.modified(path))

                origin.script(
                    "/feed",
                    .respond(
                        status: 429, body: patternBytes(50_000, seed: 3),
                        headers: ["Retry-After: 30", "ETag: \"throttled\"", "Last-Modified: \(Self.originDate)"]))
                let held = ConditionalRequest(etag: "\"v1\"")
                let throttled = try await fetcher.download(
                    origin.url("/feed"), to: path, conditional: held, limits: Self.limits, passing: Self.throttles)
                #expect(throttled.status == 429 && throttled.bytes == 0)
                // The throttle's validators are not the copy's: the ones sent stand.
                #expect(throttled.etag == "\"v1\"" && throttled.lastModified == nil)
                #expect(Disk.bytes(path) == bytes && Disk.modified(path) == modified)
                #expect(Disk.listing(directory) == ["feed"])

                // Other statuses still throw, and leave it as it was too.
                for status in [404, 500] {
                    origin.script("/feed", .respond(status: status, body: patternBytes(5_000, seed: 4)))
                    let failed = await fetcher.downloadResult(origin.url("/feed"), to: path, limits: Self.limits, passing: Self.throttles)
                    #expect(failed.failure == .httpStatus(status))
                }
                #expect(Disk.bytes(path) == bytes && Disk.listing(directory) == ["feed"])
            }
        }
    }

    @Test func aPassedStatusUnder400HasItsBodyDropped() async throws {
        try await withOrigin { origin, fetcher in
            try await withScratchDirectory { directory in
                // A 300 with no Location is final, and libcurl reads its body: none of it may reach the file.
                origin.script("/choices", .respond(status: 300, body: patternBytes(40_000), headers: ["Retry-After: 9"]))
                let path = directory + "/feed"
                let download = try await fetcher.download(origin.url("/choices"), to: path, limits: Self.limits, passing: [300])
                #expect(download.status == 300 && download.bytes == 0 && download.freshness.retryAfter == .seconds(9))
                #expect(Disk.listing(directory).isEmpty)
                // Not a byte of it touches the disk: into a folder that does not exist, it answers all the same.
                let nowhere = try await fetcher.download(
                    origin.url("/choices"), to: directory + "/missing/feed", limits: Self.limits, passing: [300])
                #expect(nowhere.status == 300 && nowhere.bytes == 0)
                // It still counts against the body limit.
                var small = Self.limits
                small.maxBodyBytes = 1_000
                let tooLarge = await fetcher.downloadResult(origin.url("/choices"), to: path, limits: small, passing: [300])
                #expect(tooLarge.failure == .tooLarge)
                #expect(Disk.listing(directory).isEmpty)
                let refused = await fetcher.downloadResult(origin.url("/choices"), to: path, limits: Self.limits)
                #expect(refused.failure == .httpStatus(300))
            }
        }
    }

    @Test func passingNeverTurnsASuccessIntoAnAnswerWithoutTheFile() async throws {
        try await withOrigin { origin, fetcher in
            try await withScratchDirectory { directory in
                origin.script("/feed", .respond(body: [1, 2, 3], headers: ["Retry-After: 9"]))
                let download = try await fetcher.download(origin.url("/feed"), to: directory + "/f", limits: Self.limits, passing: [200, 304])
                #expect(download.status == 200 && download.bytes == 3 && Disk.bytes(directory + "/f") == [1, 2, 3])
                #expect(download.freshness.retryAfter == .seconds(9))
            }
        }
    }

    @Test func a304KeepsItsFreshness() async throws {
        try await withOrigin { origin, fetcher in
            try await withScratchDirectory { directory in
                origin.script(
                    "/feed",
                    .respond(
                        status: 304, contentType: nil, body: [],
                        headers: [
                            "ETag: \"v1\"", "Cache-Control: max-age=900", "Date: \(Self.originDate)",
                        ]))
                let held = ConditionalRequest(etag: "\"v1\"")
                let download = try await fetcher.download(
                    origin.url("/feed"), to: directory + "/f", conditional: held, limits: Self.limits, passing: Self.throttles)
                #expect(download.notModified && download.bytes == 0 && Disk.listing(directory).isEmpty)
                #expect(download.freshness == ResponseFreshness(maxAge: 900, date: 978_307_200))
                #expect(download.freshness.freshFor(receivedAt: Self.receivedAt) == 900)
            }
        }
    }

    @Test func aRedirectsHeadersDoNotLeakIntoTheFinalFreshness() async throws {
        try await withOrigin { origin, fetcher in
            try await withScratchDirectory { directory in
                let everything = [
                    "Cache-Control: max-age=999, no-store", "Age: 5", "Date: \(Self.originDate)",
                    "Expires: Mon, 01 Jan 2001 00:00:10 GMT", "Retry-After: 999",
                ]
                origin.script("/old", .redirect(to: "/new", status: 301, headers: everything))
                origin.script("/new", .respond(body: [1, 2, 3]))
                let download = try await fetcher.download(origin.url("/old"), to: directory + "/f", limits: Self.limits)
                #expect(download.finalURL == origin.url("/new") && Disk.bytes(directory + "/f") == [1, 2, 3])
                #expect(download.freshness == ResponseFreshness())

                // A redirect to a throttled origin: only the final answer's Retry-After counts.
                origin.script("/moved", .redirect(to: "/throttled", status: 302, headers: everything))
                origin.script("/throttled", .respond(status: 429, body: [], headers: ["Retry-After: 7"]))
                let throttled = try await fetcher.download(
                    origin.url("/moved"), to: directory + "/g", limits: Self.limits, passing: Self.throttles)
                #expect(throttled.status == 429 && throttled.finalURL == origin.url("/throttled"))
                #expect(throttled.freshness == ResponseFreshness(retryAfter: .seconds(7)))
                #expect(!Disk.exists(directory + "/g"))
            }
        }
    }
}
