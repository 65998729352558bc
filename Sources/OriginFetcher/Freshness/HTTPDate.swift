import Reckoning

/// HTTP-dates (RFC 9110 §5.6.7), as seconds since 1970 (UTC).
///
/// A recipient must accept all three forms: the IMF-fixdate every sender
/// should use, `Sun, 06 Nov 1994 08:49:37 GMT`, and the two obsolete ones,
/// RFC 850's `Sunday, 06-Nov-94 08:49:37 GMT` and C's asctime,
/// `Sun Nov  6 08:49:37 1994`. Written here rather than borrowed:
/// `FeedImport`'s dates (RSS and Atom) are a feed's, and this module may not
/// import it; Foundation's formatters take a locale and a time zone to say
/// what this grammar says exactly.
///
/// The grammar is followed to the byte: names in their case, one space where
/// it has one, two digits where it has two. A day name must be a day's name
/// but need not be the date's (the instant is in the numbers). A date that
/// does not exist (31 April, 29 February of a common year, 24:00:00) is no
/// date. Nothing here can overflow: years have four digits.
enum HTTPDate {
    /// The instant `text` names, or nil when it is not an HTTP-date.
    /// `now` (seconds since 1970) places RFC 850's two-digit years: the
    /// latest year with those digits not more than 50 years after `now`'s.
    static func secondsSince1970(_ text: some StringProtocol, now: Int64) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count <= 40 else { return nil }
        return imfFixdate(bytes) ?? rfc850(bytes, now: now) ?? asctime(bytes)
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`.
    private static func imfFixdate(_ bytes: [UInt8]) -> Int64? {
        var reader = Reader(bytes)
        guard reader.name(in: shortDays) != nil, reader.literal(", "),
            let day = reader.number(digits: 2), reader.literal(" "),
            let month = reader.name(in: months), reader.literal(" "),
            let year = reader.number(digits: 4), reader.literal(" "),
            let time = reader.timeOfDay(), reader.literal(" GMT"), reader.atEnd
        else { return nil }
        return instant(year: year, month: month + 1, day: day, time)
    }

    /// `Sunday, 06-Nov-94 08:49:37 GMT`.
    private static func rfc850(_ bytes: [UInt8], now: Int64) -> Int64? {
        var reader = Reader(bytes)
        guard reader.name(in: longDays) != nil, reader.literal(", "),
            let day = reader.number(digits: 2), reader.literal("-"),
            let month = reader.name(in: months), reader.literal("-"),
            let twoDigits = reader.number(digits: 2), reader.literal(" "),
            let time = reader.timeOfDay(), reader.literal(" GMT"), reader.atEnd
        else { return nil }
        return instant(year: fullYear(twoDigits, now: now), month: month + 1, day: day, time)
    }

    /// `Sun Nov  6 08:49:37 1994`: the day is two digits, or a space and one.
    private static func asctime(_ bytes: [UInt8]) -> Int64? {
        var reader = Reader(bytes)
        guard reader.name(in: shortDays) != nil, reader.literal(" "),
            let month = reader.name(in: months), reader.literal(" ")
        else { return nil }
        let day = reader.literal(" ") ? reader.number(digits: 1) : reader.number(digits: 2)
        guard let day, reader.literal(" "),
            let time = reader.timeOfDay(), reader.literal(" "),
            let year = reader.number(digits: 4), reader.atEnd
        else { return nil }
        return instant(year: year, month: month + 1, day: day, time)
    }

    /// RFC 9110 §5.6.7: a two-digit year that appears to be more than 50
    /// years in the future is the most recent past year with the same last
    /// two digits.
    static func fullYear(_ twoDigits: Int, now: Int64) -> Int {
        let days = now / 86_400 - (now % 86_400 < 0 ? 1 : 0)
        let thisYear = CivilDate(daysSince1970: Int(days)).year
        let century = thisYear - ((thisYear % 100) + 100) % 100
        let candidate = century + twoDigits
        // The latest year with these digits that is not more than 50 years ahead.
        if candidate > thisYear + 50 { return candidate - 100 }
        return candidate + 100 <= thisYear + 50 ? candidate + 100 : candidate
    }

    /// The instant of a date and time read from the grammar, or nil when no
    /// such date or time exists. A leap second (`:60`) is the next minute's first.
    private static func instant(year: Int, month: Int, day: Int, _ time: (hour: Int, minute: Int, second: Int)) -> Int64? {
        let date = CivilDate(year: year, month: month, day: day)
        guard date.isValid, time.hour < 24, time.minute < 60, time.second <= 60 else { return nil }
        return Int64(date.daysSince1970) * 86_400 + Int64(time.hour * 3600 + time.minute * 60 + time.second)
    }

    private static let shortDays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map { Array($0.utf8) }
    private static let longDays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"].map { Array($0.utf8) }
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"].map { Array($0.utf8) }

    /// Reads a date's parts from the front of its bytes; each read either
    /// takes what it names and moves on, or takes nothing.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        /// Takes `text` when the bytes go on with exactly it.
        mutating func literal(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            let matches = text.withUTF8Buffer { expected in bytes[index..<(index + count)].elementsEqual(expected) }
            if matches { index += count }
            return matches
        }

        /// Takes one of `names` (none is the start of another, but for the
        /// day names' short forms, which are never asked for with the long);
        /// answers its place in the list.
        mutating func name(in names: [[UInt8]]) -> Int? {
            for (place, name) in names.enumerated()
            where bytes.count - index >= name.count && bytes[index..<(index + name.count)].elementsEqual(name) {
                index += name.count
                return place
            }
            return nil
        }

        /// Takes exactly `digits` ASCII digits.
        mutating func number(digits: Int) -> Int? {
            guard bytes.count - index >= digits else { return nil }
            var value = 0
            for byte in bytes[index..<(index + digits)] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += digits
            return value
        }

        /// Takes `hh:mm:ss`.
        mutating func timeOfDay() -> (hour: Int, minute: Int, second: Int)? {
            guard let hour = number(digits: 2), literal(":"), let minute = number(digits: 2), literal(":"),
                let second = number(digits: 2)
            else { return nil }
            return (hour, minute, second)
        }
    }
}
