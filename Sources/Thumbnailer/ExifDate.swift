import Foundation

/// EXIF date-times as libvips reports them: `"2019:05:04 12:01:02 (2019:05:04
/// 12:01:02, ASCII, 20 components, 20 bytes)"`, the value first, then
/// libvips' description of it. EXIF records local time without a zone; the
/// offset, when a camera writes one, is a separate field such as `"+02:00"`.
enum ExifDate {
    /// The instant of the leading `YYYY:MM:DD HH:MM:SS` of `text`, at UTC
    /// shifted by `offset` (a leading `±HH:MM`) when that is one; nil when
    /// `text` does not start with a real date and time, such as the
    /// `0000:00:00 00:00:00` or blanks cameras write when they do not know.
    static func parse(_ text: String, offset: String? = nil) -> Date? {
        let bytes = Array(text.utf8.prefix(19))
        guard bytes.count == 19, [4, 7].allSatisfy({ bytes[$0] == UInt8(ascii: ":") || bytes[$0] == UInt8(ascii: "-") }),
              bytes[10] == UInt8(ascii: " "), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let year = number(bytes, 0, 4), let month = number(bytes, 5, 2), let day = number(bytes, 8, 2),
              let hour = number(bytes, 11, 2), let minute = number(bytes, 14, 2), let second = number(bytes, 17, 2),
              year >= 1, (1...12).contains(month), (1...daysIn(month, of: year)).contains(day),
              hour < 24, minute < 60, second < 60
        else { return nil }
        let days = daysSince1970(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - (offset.flatMap(offsetSeconds) ?? 0)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// The seconds east of UTC of a leading `±HH:MM`; nil when there is none.
    static func offsetSeconds(_ text: String) -> Int? {
        let bytes = Array(text.utf8.prefix(6))
        guard bytes.count == 6, bytes[0] == UInt8(ascii: "+") || bytes[0] == UInt8(ascii: "-"),
              bytes[3] == UInt8(ascii: ":"), let hours = number(bytes, 1, 2), let minutes = number(bytes, 4, 2),
              hours <= 14, minutes < 60
        else { return nil }
        let seconds = hours * 3600 + minutes * 60
        return bytes[0] == UInt8(ascii: "-") ? -seconds : seconds
    }

    /// The decimal number in `bytes[start..<start + count]`; nil unless all digits.
    private static func number(_ bytes: [UInt8], _ start: Int, _ count: Int) -> Int? {
        var value = 0
        for byte in bytes[start..<start + count] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar
    /// (Howard Hinnant's `days_from_civil`), with no calendar or time zone
    /// object in the way.
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
