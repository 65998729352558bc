import Reckoning
import Testing

@Suite struct CivilDateTests {
    @Test(arguments: [
        (1970, 1, 1, 0),
        (1969, 12, 31, -1),
        (2000, 2, 29, 11016),
        (2000, 3, 1, 11017),
        (1900, 3, 1, -25508),
        (2024, 2, 29, 19782),
        (1, 1, 1, -719_162),
        (0, 3, 1, -719_468),
        (0, 1, 1, -719_528),
        (-1, 12, 31, -719_529),
        (9999, 12, 31, 2_932_896),
    ])
    func knownDays(year: Int, month: Int, day: Int, days: Int) {
        let date = CivilDate(year: year, month: month, day: day)
        #expect(date.daysSince1970 == days)
        #expect(CivilDate(daysSince1970: days) == date)
    }

    @Test func everyDayRoundTripsAndFollowsTheDayBefore() {
        var previous = CivilDate(daysSince1970: -800_001)
        for days in -800_000...800_000 {
            let date = CivilDate(daysSince1970: days)
            #expect(date.isValid)
            #expect(date.daysSince1970 == days)
            let next =
                previous.day < CivilDate.daysIn(month: previous.month, year: previous.year)
                ? CivilDate(year: previous.year, month: previous.month, day: previous.day + 1)
                : previous.month < 12
                    ? CivilDate(year: previous.year, month: previous.month + 1, day: 1)
                    : CivilDate(year: previous.year + 1, month: 1, day: 1)
            if date != next {
                Issue.record("\(date) does not follow \(previous)")
                return
            }
            previous = date
        }
    }

    @Test func leapDays() {
        #expect(CivilDate(year: 2024, month: 2, day: 29).isValid)
        #expect(CivilDate(year: 2000, month: 2, day: 29).isValid)
        #expect(CivilDate(year: 1600, month: 2, day: 29).isValid)
        #expect(CivilDate(year: 0, month: 2, day: 29).isValid)
        #expect(!CivilDate(year: 1900, month: 2, day: 29).isValid)
        #expect(!CivilDate(year: 2100, month: 2, day: 29).isValid)
        #expect(!CivilDate(year: 2023, month: 2, day: 29).isValid)
        #expect(!CivilDate(year: 2023, month: 4, day: 31).isValid)
        #expect(!CivilDate(year: 2023, month: 13, day: 1).isValid)
        #expect(!CivilDate(year: 2023, month: 1, day: 0).isValid)
    }
}

@Suite struct ISO8601Tests {
    @Test func millisecondsAreWrittenToTheSecondInUTC() {
        #expect(CivilDate.iso8601(milliseconds: 0) == "1970-01-01T00:00:00Z")
        #expect(CivilDate.iso8601(milliseconds: 1_764_669_600_999) == "2025-12-02T10:00:00Z")
        #expect(CivilDate.iso8601(milliseconds: 951_782_400_000) == "2000-02-29T00:00:00Z")
        #expect(CivilDate.iso8601(milliseconds: -1) == "1969-12-31T23:59:59Z")
    }
}
