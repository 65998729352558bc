/// The bytes of an HTML document being written: literal template text,
/// escaped values and numbers appended straight into one growing array, with
/// no `String` built along the way.
public struct HTMLBuffer: Sendable {
    public private(set) var bytes: [UInt8]

    /// An empty buffer with room for `capacity` bytes.
    public init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Appends bytes as they are (template text, or HTML already made).
    public mutating func append(raw: some Collection<UInt8>) {
        bytes.append(contentsOf: raw)
    }

    /// Appends bytes as they are.
    public mutating func append(raw: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: raw)
    }

    /// Appends text as they are, unescaped (`{{{name}}}`).
    public mutating func append(raw text: String) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// Appends text with the five characters Mustache escapes replaced by
    /// their entities (`&<>"'`), a run of plain bytes copied at once.
    public mutating func append(escaped text: String) {
        var text = text
        text.withUTF8 { appendEscaped($0) }
    }

    /// Appends UTF-8 bytes escaped as `append(escaped:)` does.
    public mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        var runStart = 0
        for index in 0..<utf8.count {
            let entity: StaticString
            switch utf8[index] {
            case UInt8(ascii: "&"): entity = "&amp;"
            case UInt8(ascii: "<"): entity = "&lt;"
            case UInt8(ascii: ">"): entity = "&gt;"
            case UInt8(ascii: "\""): entity = "&quot;"
            case UInt8(ascii: "'"): entity = "&#39;"
            default: continue
            }
            if runStart < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
            bytes.append(contentsOf: UnsafeBufferPointer(start: entity.utf8Start, count: entity.utf8CodeUnitCount))
            runStart = index + 1
        }
        if runStart < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
    }

    /// Appends a whole number in decimal (numbers need no escaping).
    public mutating func append(_ number: Int) {
        if number < 0 {
            bytes.append(UInt8(ascii: "-"))
            // Int.min has no positive twin: its magnitude fits a UInt.
            appendDigits(UInt(bitPattern: number).magnitudeOfNegative)
        } else {
            appendDigits(UInt(number))
        }
    }

    /// Appends `number` in decimal with at least `width` digits, zero-padded.
    public mutating func append(_ number: Int, width: Int) {
        var digits = 1
        var rest = max(0, number) / 10
        while rest > 0 { digits += 1; rest /= 10 }
        for _ in digits..<max(digits, width) { bytes.append(UInt8(ascii: "0")) }
        append(number)
    }

    private mutating func appendDigits(_ value: UInt) {
        if value < 10 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(value))
            return
        }
        var scratch: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: a UInt has at most 20 digits
        withUnsafeMutableBytes(of: &scratch) { scratch in
            var value = value
            var index = scratch.count
            while value > 0 {
                index -= 1
                scratch[index] = UInt8(ascii: "0") &+ UInt8(value % 10)
                value /= 10
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[index...]))
        }
    }
}

extension UInt {
    /// The magnitude of a negative Int given by its bit pattern.
    fileprivate var magnitudeOfNegative: UInt { ~self &+ 1 }
}
