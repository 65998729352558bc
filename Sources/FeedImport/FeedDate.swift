import Foundation
import Reckoning

/// Dates as feeds write them: RFC 822 with its many variants (RSS), RFC 3339
/// and its ISO 8601 cousins (Atom, JSON Feed, `dc:date`).
///
/// Written by hand because `DateFormatter` needs one pattern per variant, is
/// locale-bound and slow; feeds in the wild mix day names, two-digit years,
/// zone names, missing seconds and stray commas.
public enum FeedDate {
    /// The date `text` names, or nil when it names none.
    public static func parse(_ text: String) -> Date? {
        let trimmed = text.trimmingFeedSpace()
        guard !trimmed.isEmpty, trimmed.utf8.count < 100 else { return nil }
        if let first = trimmed.utf8.first, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9"),
            let date = iso8601(trimmed)
        {
            return date
        }
        return rfc822(trimmed)
    }

    // MARK: RFC 3339 / ISO 8601

    /// `2002-09-07`, `2002-09-07T00:00:01Z`, `2002-09-07 00:00:01.123+02:00`, `20020907T000001Z`…
    static func iso8601(_ text: String) -> Date? {
        var scanner = DigitScanner(Array(text.utf8))
        guard let year = scanner.number(maxDigits: 4), scanner.lastLength == 4 else { return nil }
        let dashed = scanner.skip("-")
        guard let month = scanner.number(maxDigits: 2) else { return nil }
        if dashed { _ = scanner.skip("-") }
        guard let day = scanner.number(maxDigits: 2) else { return nil }
        var hour = 0, minute = 0, second = 0, fraction = 0.0, offset = 0
        if scanner.skip("T") || scanner.skip("t") || scanner.skip(" ") {
            guard let h = scanner.number(maxDigits: 2) else { return nil }
            _ = scanner.skip(":")
            guard let m = scanner.number(maxDigits: 2) else { return nil }
            hour = h
            minute = m
            if scanner.skip(":") || scanner.peekDigit {
                guard let s = scanner.number(maxDigits: 2) else { return nil }
                second = s
            }
            if scanner.skip(".") || scanner.skip(",") {
                fraction = scanner.fraction()
            }
            scanner.skipSpaces()
            if scanner.skip("Z") || scanner.skip("z") {
                offset = 0
            } else if let sign = scanner.sign() {
                guard let oh = scanner.number(maxDigits: 2) else { return nil }
                _ = scanner.skip(":")
                let om = scanner.number(maxDigits: 2) ?? 0
                offset = sign * (oh * 3600 + om * 60)
            } else if let zone = scanner.letters(), let zoneOffset = zoneOffsets[zone.uppercased()] {
                offset = zoneOffset
            }
        }
        scanner.skipSpaces()
        guard scanner.atEnd else { return nil }
        return make(year: year, month: month, day: day, hour: hour, minute: minute, second: second, offset: offset, fraction: fraction)
    }

    // MARK: RFC 822 and variants

    /// `Sat, 07 Sep 2002 00:00:01 GMT`, `7 Sep 02 00:00 +0200`, `Saturday, 7 September 2002 00:00:01 EDT`,
    /// `Sep 7, 2002 10:00 PM`…: tokens in any order the variants use.
    static func rfc822(_ text: String) -> Date? {
        var numbers: [(value: Int, length: Int)] = []
        var month: Int?
        var offset: Int?
        var time: (Int, Int, Int)?
        var afternoon: Bool?
        var tokens = tokenize(text)
        while !tokens.isEmpty {
            let token = tokens.removeFirst()
            if let first = token.first, first == "+" || first == "-", token.count >= 3 {
                let digits = token.dropFirst().filter { $0 != ":" }
                guard digits.count >= 2, digits.count <= 4, let value = Int(digits) else { return nil }
                let hours = digits.count <= 2 ? value : value / 100
                let minutes = digits.count <= 2 ? 0 : value % 100
                offset = (first == "-" ? -1 : 1) * (hours * 3600 + minutes * 60)
                continue
            }
            if token.contains(":") {
                let parts = token.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
                guard parts.count >= 2, parts.count <= 3, let h = parts[0], let m = parts[1] else { return nil }
                let s = parts.count == 3 ? (parts[2] ?? 0) : 0
                time = (h, m, s)
                continue
            }
            if let value = Int(token) {
                numbers.append((value, token.count))
                continue
            }
            let upper = token.uppercased()
            if let m = monthNumbers[String(upper.prefix(3))], upper.count >= 3 {
                month = month ?? m
                continue
            }
            if upper == "PM" || upper == "AM" {
                afternoon = upper == "PM"
                continue
            }
            if let zone = zoneOffsets[upper] {
                offset = zone
                continue
            }
            if dayNames.contains(String(upper.prefix(3))) { continue }
            // An unknown word (a zone name like "CEST" in brackets, noise): tolerated once.
            if upper.count <= 5, offset == nil { continue }
            return nil
        }
        guard let month, numbers.count == 2 else { return nil }
        // Day then year, or (US style "Sep 7, 2002") the same order; a 4-digit number is the year.
        var day = numbers[0].value
        var year = numbers[1].value
        var yearLength = numbers[1].length
        if numbers[0].length == 4 {
            (year, day, yearLength) = (numbers[0].value, numbers[1].value, 4)
        }
        if yearLength <= 2 { year += year < 50 ? 2000 : 1900 }
        var (hour, minute, second) = time ?? (0, 0, 0)
        if let afternoon {
            if afternoon, hour < 12 { hour += 12 }
            if !afternoon, hour == 12 { hour = 0 }
        }
        return make(year: year, month: month, day: day, hour: hour, minute: minute, second: second, offset: offset ?? 0)
    }

    private static func tokenize(_ text: String) -> [String] {
        var tokens: [String] = []
        var current = ""
        for character in text {
            if character == " " || character == "," || character == "\t" || character == "(" || character == ")" {
                if !current.isEmpty { tokens.append(current) }
                current = ""
            } else {
                current.append(character)
            }
        }
        if !current.isEmpty { tokens.append(current) }
        // "2002-09-07" inside an RFC 822-ish string is not handled here; the ISO path took it.
        return tokens
    }

    private static func make(
        year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, offset: Int, fraction: Double = 0
    ) -> Date? {
        guard (1...12).contains(month), (1...31).contains(day), (0...24).contains(hour), (0...59).contains(minute),
            (0...60).contains(second), (1...9999).contains(year)
        else { return nil }
        let date = CivilDate(year: year, month: month, day: day)
        guard date.isValid else { return nil }
        let days = date.daysSince1970
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offset) + fraction
        return Date(timeIntervalSince1970: seconds)
    }

    private static let monthNumbers: [String: Int] = [
        "JAN": 1, "FEB": 2, "MAR": 3, "APR": 4, "MAY": 5, "JUN": 6,
        "JUL": 7, "AUG": 8, "SEP": 9, "OCT": 10, "NOV": 11, "DEC": 12,
    ]
    private static let dayNames: Set<String> = ["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"]
    /// RFC 822's zone names, their common cousins, and its military letters (Z only; the others were never used consistently).
    private static let zoneOffsets: [String: Int] = [
        "GMT": 0, "UT": 0, "UTC": 0, "Z": 0, "Z.": 0,
        "EST": -5 * 3600, "EDT": -4 * 3600, "CST": -6 * 3600, "CDT": -5 * 3600,
        "MST": -7 * 3600, "MDT": -6 * 3600, "PST": -8 * 3600, "PDT": -7 * 3600,
        "BST": 3600, "CET": 3600, "CEST": 2 * 3600, "EET": 2 * 3600, "EEST": 3 * 3600,
        "IST": 5 * 3600 + 1800, "JST": 9 * 3600, "AEST": 10 * 3600, "AEDT": 11 * 3600,
    ]
}

/// Reads digits and signs off the bytes of an ISO 8601 date.
private struct DigitScanner {
    let bytes: [UInt8]
    var index = 0
    var lastLength = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }
    var peekDigit: Bool { index < bytes.count && (48...57).contains(bytes[index]) }

    mutating func number(maxDigits: Int) -> Int? {
        var value = 0
        var count = 0
        while count < maxDigits, peekDigit {
            value = value * 10 + Int(bytes[index] - 48)
            index += 1
            count += 1
        }
        lastLength = count
        return count == 0 ? nil : value
    }

    mutating func fraction() -> Double {
        var value = 0.0
        var scale = 0.1
        while peekDigit {
            value += Double(bytes[index] - 48) * scale
            scale /= 10
            index += 1
        }
        return value
    }

    mutating func skip(_ character: Unicode.Scalar) -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
        index += 1
        return true
    }

    mutating func skipSpaces() {
        while index < bytes.count, bytes[index] == 0x20 { index += 1 }
    }

    mutating func sign() -> Int? {
        if skip("+") { return 1 }
        if skip("-") { return -1 }
        return nil
    }

    mutating func letters() -> String? {
        let start = index
        while index < bytes.count, (65...90).contains(bytes[index]) || (97...122).contains(bytes[index]) { index += 1 }
        return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
    }
}
