import Foundation
import HTTPTestClient
import Testing

@testable import OriginFetcher

/// Downloads into files: validators, conditional requests, and a file only when whole.
@Suite struct DownloadTests {
    static let feedHeaders = [
        ("Accept", "application/feed+json, application/rss+xml, application/atom+xml, application/xml;q=0.9, */*;q=0.8"),
        ("User-Agent", "Warmfeed/1.0"),
    ]
    static let etag = "\"v1-abc\""
    static let lastModified = "Sat, 01 Jun 2024 10:00:00 GMT"
    static let limits = FetchLimits(totalTimeout: .seconds(60), maxBodyBytes: 512 << 20)

    @Test func writesTheBodyWithItsValidators() async throws {
        try await withOrigin { origin, fetcher in
            try await withScratchDirectory { directory in
                let bytes = patternBytes(300_000)
                origin.script(
                    "/feed.json",
                    .conditional(
                        etag: Self.etag, lastModified: Self.lastModified, body: bytes,
                        contentType: "application/feed+json"))
                let path = directory + "/feed.json"
                let download = try await fetcher.download(
                    origin.url("/feed.json"), to: path, headers: Self.feedHeaders,
                    limits: Self.limits)
                #expect(download.status == 200 && !download.notModified)
                #expect(download.bytes == bytes.count)
                #expect(download.etag == Self.etag && download.lastModified == Self.lastModified)
                #expect(download.contentType == "application/feed+json")
                #expect(download.finalURL == origin.url("/feed.json"))
                #expect(Disk.bytes(path) == bytes)
                #expect(Disk.listing(directory) == ["feed.json"])
                let head = try #require(origin.lastRequest(to: "/feed.json"))
                #expect(origin.lastRequestHeader("Accept", to: "/feed.json") == Self.feedHeaders[0].1)
                // The caller's User-Agent replaces the fetcher's, it is not sent twice.
                #expect(origin.lastRequestHeader("User-Agent", to: "/feed.json") == "Warmfeed/1.0")
                #expect(head.components(separatedBy: "User-Agent").count == 2)
                #expect(origin.lastRequestHeader("If-None-Match", to: "/feed.json") == nil)
                #expect(origin.lastRequestHeader("If-Modified-Since", to: "/feed.json") == nil)
            }
        }
    }

    @Test func anUnchangedSourceAnswers304AndTheFileIsUntouched() async throws {
        try await withOrigin { origin, fetcher in
            try await withScratchDirectory { directory in
                let bytes = patternBytes(50_000)
                origin.script("/feed.xml", .conditional(etag: Self.etag, lastModified: Self.lastModified, body: bytes))
                let path = directory + "/feed.xml"
                let first = try await fetcher.download(origin.url("/feed.xml"), to: path, limits: Self.limits)
                let modified = try #require(Disk.modified(path))

                let held = ConditionalRequest(etag: first.etag, lastModified: first.lastModified)
                let second = try await fetcher.download(
                    origin.url("/feed.xml"), to: path, conditional: held,
                    headers: Self.feedHeaders, limits: Self.limits)
                #expect(second.notModified && second.status == 304 && second.bytes == 0)
                #expect(second.etag == Self.etag && second.lastModified == Self.lastModified)
                #expect(origin.lastRequestHeader("If-None-Match", to: "/feed.xml") == Self.etag)
                #expect(origin.lastRequestHeader("If-Modified-Since", to: "/feed.xml") == Self.lastModified)
                #expect(origin.lastRequestHeader("Accept", to: "/feed.xml") == Self.feedHeaders[0].1)
                #expect(Disk.bytes(path) == bytes && Disk.modified(path) == modified)
                #expect(Disk.listing(directory) == ["feed.xml"])

                // A 304 to a path with no copy yet creates nothing there.
                let elsewhere = directory + "/other.xml"
                let byDate = ConditionalRequest(lastModified: Self.lastModified)
                let third = try await fetcher.download(
                    origin.url("/feed.xml"), to: elsewhere, conditional: byDate,
                    limits: Self.limits)
                #expect(third.notModified && third.etag == Self.etag)
                #expect(!Disk.exists(elsewhere) && Disk.listing(directory) == ["feed.xml"])

                // A changed source (another ETag) comes whole.
                let stale = ConditionalRequest(etag: "\"v0\"")
                let fourth = try await fetcher.download(
                    origin.url("/feed.xml"), to: elsewhere, conditional: stale,
                    limits: Self.limits)
                #expect(fourth.status == 200 && Disk.bytes(elsewhere) == bytes)
            }
        }
    }

    @Test func theValidatorsAreThoseOfTheFinalResponse() async throws {
        try await withOrigin { origin, fetcher in
            try await withScratchDirectory { directory in
                origin.script(
                    "/old",
                    .redirect(
                        to: "/new", status: 301,
                        headers: [
                            "ETag: \"redirect\"", "Last-Modified: \(Self.lastModified)",
                            "Content-Type: text/html",
                        ]))
                origin.script("/new", .respond(contentType: "application/rss+xml", body: [1, 2, 3]))
                let download = try await fetcher.download(origin.url("/old"), to: directory + "/f", limits: Self.limits)
                #expect(download.etag == nil && download.lastModified == nil)
                #expect(download.contentType == "application/rss+xml")
                #expect(download.finalURL == origin.url("/new"))
                #expect(Disk.bytes(directory + "/f") == [1, 2, 3])
            }
        }
    }

    @Test func anEmptyBodyMakesAnEmptyFile() async throws {
        try await withOrigin { origin, fetcher in
            try await withScratchDirectory { directory in
                origin.script("/empty", .respond(body: []))
                let download = try await fetcher.download(origin.url("/empty"), to: directory + "/f", limits: Self.limits)
                #expect(download.status == 200 && download.bytes == 0)
                #expect(Disk.bytes(directory + "/f") == [])
            }
        }
    }

    @Test func readsLocalFilesOnlyWhenAllowed() async throws {
        try await withScratchDirectory { directory in
            let source = directory + "/source.xml"
            let bytes = patternBytes(70_000)
            #expect(FileManager.default.createFile(atPath: source, contents: Data(bytes)))
            let fetcher = OriginFetcher()
            defer { fetcher.shutdown() }
            let refused = await fetcher.downloadResult("file://" + source, to: directory + "/copy", limits: Self.limits)
            #expect(refused.failure == .schemeNotAllowed)
            var allowed = Self.limits
            allowed.allowFileScheme = true
            let download = try await fetcher.download("file://" + source, to: directory + "/copy", limits: allowed)
            #expect(download.status == 200 && download.bytes == bytes.count)
            #expect(Disk.bytes(directory + "/copy") == bytes)
            // libcurl reports the file's modification time as its Last-Modified.
            #expect(download.lastModified?.hasSuffix(" GMT") == true)
            #expect(download.finalURL == "file://" + source)
        }
    }

    @Test func fetchStillRefusesA304() async throws {
        try await withOrigin { origin, fetcher in
            origin.script("/304", .respond(status: 304, contentType: nil, body: []))
            #expect(await fetcher.result(origin.url("/304")).failure == .httpStatus(304))
        }
    }

    @Test func aHundredMegabytesStreamToDiskInBoundedMemory() async throws {
        // In a child process of its own (an exit test): tests running alongside
        // in this process would add their own allocations to the peak.
        let child = await ExitTestTurns.inTurn {
            await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
                let growth = try await Self.peakGrowthDownloadingAHundredMegabytes()
                print("peak growth: \(growth)")
            }
        }
        let output = String(decoding: child?.standardOutputContent ?? [], as: UTF8.self)
        let growth = output.split(separator: "\n").last { $0.hasPrefix("peak growth: ") }
            .flatMap { Int($0.dropFirst("peak growth: ".count)) }
        let measured = try #require(growth, "child said: \(output)")
        #expect(measured < 50 << 20, "the peak resident set grew by \(measured >> 20) MiB")
    }

    /// Downloads 100 MiB from a loopback origin and answers how far the peak
    /// resident set rose above the resident set before it, in bytes; throws
    /// when the file is not the body sent.
    static func peakGrowthDownloadingAHundredMegabytes() async throws -> Int {
        try await withOrigin { origin, fetcher in
            try await withScratchDirectory { directory in
                let length = 100 << 20
                origin.script("/big", .pattern(length: length))
                let path = directory + "/big"
                guard ProcessMemory.resetPeak(), let before = ProcessMemory.field("VmRSS") else {
                    throw CocoaError(.featureUnsupported)
                }
                let download = try await fetcher.download(origin.url("/big"), to: path, limits: Self.limits)
                guard let peak = ProcessMemory.field("VmHWM"), download.bytes == length,
                    try Self.isPattern(path, length: length)
                else { throw CocoaError(.fileReadCorruptFile) }
                return peak - before
            }
        }
    }

    /// Whether the file at `path` is `length` bytes of `FaultyOrigin.patternCycle`, read a few MB at a time.
    static func isPattern(_ path: String, length: Int) throws -> Bool {
        let block = Array(repeating: FaultyOrigin.patternCycle, count: 256 * 16).flatMap { $0 }
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        var total = 0
        while let data = try handle.read(upToCount: block.count), !data.isEmpty {
            guard data.count <= block.count else { return false }
            let same = data.withUnsafeBytes { read in
                block.withUnsafeBytes { expected in memcmp(read.baseAddress!, expected.baseAddress!, read.count) == 0 }
            }
            guard same else { return false }
            total += data.count
        }
        return total == length
    }
}
