import Testing

@testable import OriginFetcher

/// HTTP-dates read exactly as RFC 9110 §5.6.7 writes them, and nothing else.
@Suite struct HTTPDateTests {
    /// RFC 9110's own example instant, 1994-11-06 08:49:37 UTC.
    static let example: Int64 = 784_111_777
    /// 2026-01-01 00:00:00 UTC, a "now" for the two-digit years.
    static let now: Int64 = 1_767_225_600

    @Test func allThreeFormsNameTheSameInstant() {
        #expect(HTTPDate.secondsSince1970("Sun, 06 Nov 1994 08:49:37 GMT", now: Self.now) == Self.example)
        #expect(HTTPDate.secondsSince1970("Sunday, 06-Nov-94 08:49:37 GMT", now: Self.now) == Self.example)
        #expect(HTTPDate.secondsSince1970("Sun Nov  6 08:49:37 1994", now: Self.now) == Self.example)
        #expect(HTTPDate.secondsSince1970("Sun Nov 06 08:49:37 1994", now: Self.now) == Self.example)
        #expect(HTTPDate.secondsSince1970("Thu, 01 Jan 1970 00:00:00 GMT", now: Self.now) == 0)
        #expect(HTTPDate.secondsSince1970("Tue, 29 Feb 2000 23:59:59 GMT", now: Self.now) == 951_868_799)
        #expect(HTTPDate.secondsSince1970("Fri, 31 Dec 9999 23:59:59 GMT", now: Self.now) == 253_402_300_799)
        // Before 1970 is negative, not refused; a leap second is the next minute's first.
        #expect(HTTPDate.secondsSince1970("Wed, 31 Dec 1969 23:59:59 GMT", now: Self.now) == -1)
        #expect(HTTPDate.secondsSince1970("Sat, 31 Dec 2016 23:59:60 GMT", now: Self.now) == 1_483_228_800)
        // The day name must be one, not the date's: the instant is in the numbers.
        #expect(HTTPDate.secondsSince1970("Mon, 06 Nov 1994 08:49:37 GMT", now: Self.now) == Self.example)
    }

    @Test func twoDigitYearsAreNeverMoreThanFiftyYearsAhead() {
        #expect(HTTPDate.fullYear(94, now: Self.now) == 1994)
        #expect(HTTPDate.fullYear(76, now: Self.now) == 2076)
        #expect(HTTPDate.fullYear(77, now: Self.now) == 1977)
        #expect(HTTPDate.fullYear(26, now: Self.now) == 2026)
        #expect(HTTPDate.fullYear(0, now: Self.now) == 2000)
        // In 2099, "00" is next year, not a century ago.
        let late: Int64 = 4_070_908_800  // 2099-01-01
        #expect(HTTPDate.fullYear(0, now: late) == 2100)
        #expect(HTTPDate.fullYear(99, now: late) == 2099)
        #expect(HTTPDate.fullYear(50, now: late) == 2050)
        // Before 1970 too.
        #expect(HTTPDate.fullYear(70, now: -86_400) == 1970)
    }

    @Test(arguments: [
        "", " ", "0", "-1", "yesterday", "1994-11-06T08:49:37Z",
        "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 GMT ",
        " Sun, 06 Nov 1994 08:49:37 GMT", "Sun,06 Nov 1994 08:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT",
        "sun, 06 nov 1994 08:49:37 gmt", "Sun, 06 NOV 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun, 06 Nov 19940 08:49:37 GMT", "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, 06 Nov 1994 08:49 GMT",
        "Xyz, 06 Nov 1994 08:49:37 GMT", "Sun, 31 Apr 1994 08:49:37 GMT", "Sun, 29 Feb 1900 08:49:37 GMT",
        "Sun, 00 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 23:60:00 GMT",
        "Sun, 06 Nov 1994 23:59:61 GMT", "Sun, 06 Nov 1994 08:49:37 GMT, Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-1994 08:49:37 GMT", "Sun, 06-Nov-94 08:49:37 GMT", "Sunday, 6-Nov-94 08:49:37 GMT",
        "Sun Nov 6 08:49:37 1994", "Sun Nov  6 08:49:37 94", "Sun Nov  6 08:49:37 1994 GMT",
        "Sun, +6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT\u{0}", "Sun, 06 Nov １９９４ 08:49:37 GMT",
        String(repeating: "9", count: 4000),
    ])
    func anythingElseIsNoDate(_ text: String) {
        #expect(HTTPDate.secondsSince1970(text, now: Self.now) == nil)
    }
}
