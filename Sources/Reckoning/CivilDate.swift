// Reckoning: the small sums several modules need and none should own — days of
// the proleptic Gregorian calendar (`CivilDate`) and FNV-1a hashes (`FNV1a`).
// No dependencies, no Foundation: the HTTP core, the importer, the thumbnailer,
// the store and the pages each use it without knowing of one another.

/// A day of the proleptic Gregorian calendar, in UTC.
///
/// Written by hand (Howard Hinnant's `days_from_civil` and its inverse) rather
/// than through `Calendar`: dates are parsed and printed in bulk, and a
/// calendar object with a time zone costs more than the row it serves.
public struct CivilDate: Hashable, Sendable {
    /// The year; 0 is 1 BC, negative years go further back.
    public var year: Int
    /// The month, 1 to 12.
    public var month: Int
    /// The day of the month, 1 to 31.
    public var day: Int

    /// The date `year`-`month`-`day`, taken as given (see `isValid`).
    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date `days` days after 1970-01-01 (before it when negative).
    public init(daysSince1970 days: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * mp + 2) / 5 + 1
        month = mp < 10 ? mp + 3 : mp - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// Days from 1970-01-01 to this date (negative before it).
    public var daysSince1970: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Whether the month is 1 to 12 and the day exists in that month of that year.
    public var isValid: Bool {
        (1...12).contains(month) && (1...Self.daysIn(month: month, year: year)).contains(day)
    }

    /// Whether `year` has a 29 February.
    public static func isLeapYear(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    /// How many days month `month` (1 to 12) of `year` has.
    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

extension CivilDate {
    /// A time in ISO 8601, UTC, to the second (`2026-12-02T10:00:00Z`), from
    /// milliseconds since 1970: cheap, with no formatter to make.
    public static func iso8601(milliseconds: Int64) -> String {
        let seconds = Int(milliseconds.floorDivided(by: 1000))
        let days = seconds.floorDivided(by: 86_400)
        let inDay = seconds - days * 86_400
        let date = CivilDate(daysSince1970: days)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(date.year)-\(two(date.month))-\(two(date.day))T\(two(inDay / 3600)):\(two(inDay % 3600 / 60)):\(two(inDay % 60))Z"
    }
}

extension BinaryInteger {
    /// The quotient rounded down (toward minus infinity), for times before 1970.
    fileprivate func floorDivided(by divisor: Self) -> Self {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
