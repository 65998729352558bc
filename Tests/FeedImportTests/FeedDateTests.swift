import Foundation
import Testing

@testable import FeedImport

@Suite struct FeedDateTests {
    /// 2002-09-07T00:00:01Z
    let reference = Date(timeIntervalSince1970: 1_031_356_801)

    @Test(arguments: [
        "Sat, 07 Sep 2002 00:00:01 GMT",
        "Sat, 7 Sep 2002 00:00:01 GMT",
        "07 Sep 2002 00:00:01 +0000",
        "Sat, 07 Sep 02 00:00:01 UT",
        "Saturday, 07 September 2002 00:00:01 GMT",
        "Fri, 06 Sep 2002 20:00:01 EDT",
        "Fri, 06 Sep 2002 19:00:01 -0500",
        "Sat, 07 Sep 2002 02:00:01 +02:00",
        "sat, 07 sep 2002 00:00:01 gmt",
        "Sat,07 Sep 2002 00:00:01 Z",
        "Sep 7, 2002 12:00:01 AM GMT",
        "2002-09-07T00:00:01Z",
        "2002-09-07T00:00:01.000Z",
        "2002-09-07T02:00:01+02:00",
        "2002-09-06T19:00:01-05:00",
        "2002-09-07T02:00:01+0200",
        "2002-09-07 00:00:01Z",
        "20020907T000001Z",
        "  2002-09-07T00:00:01Z \n",
    ])
    func variantsOfTheSameInstant(text: String) {
        #expect(FeedDate.parse(text) == reference, "\(text)")
    }

    @Test func dateOnlyAndMissingSecondsAndZone() {
        #expect(FeedDate.parse("2002-09-07") == Date(timeIntervalSince1970: 1_031_356_800))
        #expect(FeedDate.parse("Sat, 07 Sep 2002 00:00 GMT") == Date(timeIntervalSince1970: 1_031_356_800))
        #expect(FeedDate.parse("Sat, 07 Sep 2002 00:00:01") == reference, "no zone reads as UTC")
        #expect(FeedDate.parse("2002-09-07T00:00:01") == reference)
    }

    @Test func fractionsAndLeapYears() throws {
        let date = try #require(FeedDate.parse("2024-02-29T12:00:00.5Z"))
        #expect(date.timeIntervalSince1970 == 1_709_208_000.5)
        #expect(FeedDate.parse("2023-02-29T12:00:00Z") == nil)
        #expect(FeedDate.parse("1969-12-31T23:59:59Z") == Date(timeIntervalSince1970: -1))
    }

    @Test(arguments: ["", "yesterday", "not a date at all", "2002-13-07", "Sat, 32 Sep 2002 00:00:01 GMT", "Sep 2002", "12:00", "99999999999"])
    func nonsenseIsNil(text: String) {
        #expect(FeedDate.parse(text) == nil, "\(text)")
    }
}
