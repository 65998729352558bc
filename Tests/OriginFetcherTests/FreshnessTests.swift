import Foundation
import HTTPTestClient
import Testing

@testable import OriginFetcher

/// What a download hears of freshness over a real loopback origin.
@Suite struct FreshnessTests {
    static let limits = FetchLimits(totalTimeout: .seconds(60))
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
                    origin.url("/feed"), to: directory + "/f", conditional: held, limits: Self.limits)
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

            }
        }
    }
}
