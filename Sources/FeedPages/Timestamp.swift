import HTMLTemplates
import Reckoning

/// Dates as the page shows them, computed without a formatter: rows are
/// rendered in bulk and Foundation's formatters cost more than the row itself.
package enum Timestamp {
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

    /// `iso(_:)`, written straight into a page being rendered.
    static func writeISO(_ milliseconds: Int64, into html: inout HTMLBuffer) {
        let (year, month, day, seconds) = civil(milliseconds)
        html.append(year)
        html.append(raw: "-".utf8)
        html.append(month, width: 2)
        html.append(raw: "-".utf8)
        html.append(day, width: 2)
        html.append(raw: "T".utf8)
        writeClock(seconds, withSeconds: true, into: &html)
        html.append(raw: "Z".utf8)
    }

    /// `display(_:)`, written straight into a page being rendered.
    static func writeDisplay(_ milliseconds: Int64, into html: inout HTMLBuffer) {
        let (year, month, day, seconds) = civil(milliseconds)
        html.append(day)
        html.append(raw: " ".utf8)
        html.append(raw: months[month - 1].utf8)
        html.append(raw: " ".utf8)
        html.append(year)
        html.append(raw: ", ".utf8)
        writeClock(seconds, withSeconds: false, into: &html)
        html.append(raw: " UTC".utf8)
    }

    private static func writeClock(_ seconds: Int, withSeconds: Bool, into html: inout HTMLBuffer) {
        html.append(seconds / 3600, width: 2)
        html.append(raw: ":".utf8)
        html.append(seconds / 60 % 60, width: 2)
        if withSeconds {
            html.append(raw: ":".utf8)
            html.append(seconds % 60, width: 2)
        }
    }

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// Year, month, day and seconds into the day of an instant in milliseconds since 1970, UTC.
    private static func civil(_ milliseconds: Int64) -> (Int, Int, Int, Int) {
        let seconds = Int(milliseconds.quotientFloor(1000))
        let days = seconds.quotientFloor(86_400)
        let date = CivilDate(daysSince1970: days)
        return (date.year, date.month, date.day, seconds - days * 86_400)
    }
}

extension BinaryInteger {
    fileprivate func quotientFloor(_ divisor: Self) -> Self {
        let q = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? q - 1 : q
    }
}
