/// Dates as the page shows them, computed without a formatter: rows are
/// rendered in bulk and Foundation's formatters cost more than the row itself.
enum Timestamp {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// ISO 8601 in UTC, for `<time datetime>`: `2026-11-01T12:00:00Z`.
    static func iso(_ milliseconds: Int64) -> String {
        let (year, month, day, seconds) = civil(milliseconds)
        return "\(year)-\(two(month))-\(two(day))T\(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60))Z"
    }

    /// For readers: `1 Nov 2026, 12:00 UTC`.
    static func display(_ milliseconds: Int64) -> String {
        let (year, month, day, seconds) = civil(milliseconds)
        return "\(day) \(months[month - 1]) \(year), \(two(seconds / 3600)):\(two(seconds / 60 % 60)) UTC"
    }

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// Year, month, day and seconds into the day, from Howard Hinnant's days-from-civil inverse.
    private static func civil(_ milliseconds: Int64) -> (Int, Int, Int, Int) {
        let seconds = Int(milliseconds.quotientFloor(1000))
        let days = seconds.quotientFloor(86_400)
        let secondOfDay = seconds - days * 86_400
        let z = days + 719_468
        let era = z.quotientFloor(146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day, secondOfDay)
    }
}

extension BinaryInteger {
    fileprivate func quotientFloor(_ divisor: Self) -> Self {
        let q = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? q - 1 : q
    }
}
