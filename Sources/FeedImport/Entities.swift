import XMLStream

/// Character references in markup: numeric ones and HTML 4's named ones (the table XMLStream answers libxml2 with).
enum Entities {
    /// The UTF-8 bytes of the reference starting at `start` (an `&`) and the
    /// index after it; nil when it is not a reference (a lone `&` stays text).
    static func decode(_ bytes: [UInt8], at start: Int) -> ([UInt8], Int)? {
        var index = start + 1
        guard index < bytes.count else { return nil }
        var scalar: Unicode.Scalar?
        if bytes[index] == UInt8(ascii: "#") {
            index += 1
            var value: UInt32 = 0
            var digits = 0
            let hex = index < bytes.count && (bytes[index] | 0x20) == UInt8(ascii: "x")
            if hex { index += 1 }
            while index < bytes.count, digits < 8 {
                let byte = bytes[index]
                let digit: UInt32
                switch byte {
                case 48...57: digit = UInt32(byte - 48)
                case 97...102 where hex: digit = UInt32(byte - 87)
                case 65...70 where hex: digit = UInt32(byte - 55)
                default: digit = 99
                }
                if digit == 99 { break }
                value = value * (hex ? 16 : 10) + digit
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            // NUL and surrogates become U+FFFD, as browsers do.
            scalar = value == 0 ? "\u{FFFD}" : (Unicode.Scalar(value) ?? "\u{FFFD}")
        } else {
            let nameStart = index
            while index < bytes.count, index - nameStart < 10,
                (65...90).contains(bytes[index]) || (97...122).contains(bytes[index]) || (48...57).contains(bytes[index])
            {
                index += 1
            }
            guard index > nameStart else { return nil }
            let name = String(decoding: bytes[nameStart..<index], as: UTF8.self)
            guard let value = HTMLEntities.codePoints[name], let named = Unicode.Scalar(value) else { return nil }
            scalar = named
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ";") { index += 1 }
        guard let scalar else { return nil }
        return (Array(String(Character(scalar)).utf8), index)
    }
}
