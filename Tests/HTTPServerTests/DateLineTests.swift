import CDateLine
import Glibc
import HTTPTestClient
import Testing

@testable import HTTPServer

/// The process's `gmtime_r` is `CDateLine`'s, which takes no lock, and it
/// answers as glibc's does, field for field.
@Suite struct DateLineTests {
    @Test func theProcessUsesTheLockFreeOne() {
        #expect(wf_gmtime_r_is_lock_free() == 1)
    }

    @Test func itAnswersAsGlibcDoes() {
        var times: [time_t] = [
            0, -1, 1, 59, 60, 86_399, 86_400, -86_400, -86_401, 951_782_400, 951_868_799, 978_307_200,
            1_700_000_000, 2_147_483_647, -2_147_483_648, 4_102_444_800, 253_402_300_799, -62_135_596_800,
            -62_135_596_801, 67_767_976_233_316_800, -67_768_040_609_740_800,
        ]
        // Midnights and the seconds either side of them, across leap days and centuries.
        for year in stride(from: -2000, through: 3000, by: 7) {
            var tm = Glibc.tm()
            tm.tm_year = Int32(year - 1900)
            tm.tm_mon = 1
            tm.tm_mday = 29
            let t = timegm(&tm)
            times += [t - 1, t, t + 1, t + 86_399, t + 86_400]
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 { times.append(time_t.random(in: -100_000_000_000...100_000_000_000, using: &generator)) }
        var mismatches: [String] = []
        for time in times {
            var ours = Glibc.tm()
            var theirs = Glibc.tm()
            var t = time
            let a = gmtime_r(&t, &ours)
            let b = wf_glibc_gmtime_r(&t, &theirs)
            if (a == nil) != (b == nil) { mismatches.append("\(time): nil \(a == nil) against \(b == nil)") }
            guard a != nil, b != nil else { continue }
            let fields = [
                (ours.tm_sec, theirs.tm_sec), (ours.tm_min, theirs.tm_min), (ours.tm_hour, theirs.tm_hour),
                (ours.tm_mday, theirs.tm_mday), (ours.tm_mon, theirs.tm_mon), (ours.tm_year, theirs.tm_year),
                (ours.tm_wday, theirs.tm_wday), (ours.tm_yday, theirs.tm_yday), (ours.tm_isdst, theirs.tm_isdst),
            ]
            let zone = (String(cString: ours.tm_zone), String(cString: theirs.tm_zone))
            if fields.contains(where: { $0.0 != $0.1 }) || ours.tm_gmtoff != theirs.tm_gmtoff || zone.0 != zone.1 {
                mismatches.append("\(time): \(ours) against \(theirs)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
        #expect(times.count > 20_000)
    }

    /// The Date line libmicrohttpd writes with it is the time now, in HTTP's form.
    @Test func responsesCarryTodaysDate() async throws {
        /// Today's "Date: Thu, 03 Dec 2026" by glibc's own gmtime_r.
        func today() -> String {
            var now = time(nil)
            var parts = Glibc.tm()
            _ = wf_glibc_gmtime_r(&now, &parts)
            var buffer = [CChar](repeating: 0, count: 64)
            strftime(&buffer, buffer.count, "Date: %a, %d %b %Y", &parts)
            return String(cString: buffer)
        }
        try await withServer(router: { $0.get("/") { _ in .now(.plain(200, "ok")) } }) { server in
            let port = server.port
            let before = today()
            let head = try await onThread { () throws -> String in
                let connection = try TestConnection(port: port, timeout: 5)
                try connection.send("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
                return connection.readUntilClose().map { String(decoding: $0, as: UTF8.self) } ?? ""
            }
            let after = today()
            let line = head.components(separatedBy: "\r\n").first { $0.hasPrefix("Date: ") } ?? "(none)"
            // Either side of a midnight that fell during the request.
            #expect((line.hasPrefix(before) || line.hasPrefix(after)) && line.hasSuffix(" GMT"), "\(line) against \(before)")
        }
    }
}
