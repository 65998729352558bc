import Foundation
import Reckoning

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
              year >= 1, case let date = CivilDate(year: year, month: month, day: day), date.isValid,
              hour < 24, minute < 60, second < 60
        else { return nil }
        let seconds = date.daysSince1970 * 86_400 + hour * 3600 + minute * 60 + second - (offset.flatMap(offsetSeconds) ?? 0)
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
}
