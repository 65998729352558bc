import HTTPTypes

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A request's header lines as sent, kept in one buffer: each line's name and
/// value bytes, and a table of where they lie.
///
/// Every request's head is read into one, so it costs two arrays, whatever
/// the lines: a value becomes a `String` only when a handler asks for it.
/// Made into `HTTPFields` (a `String` and a checked field a line) it was 8%
/// of a reader's warm page's CPU (perf, pinned), most of it for lines nobody
/// reads (`User-Agent`, `Accept`, `Sec-Fetch-Dest`).
///
/// Values are kept as `HTTPField(name:value:)` keeps them: without the spaces
/// and tabs around them. A name that is not a token is left out, as
/// `HTTPField.Name` refuses it.
public struct RequestFields: Sendable {
    /// Where one line's name and value lie in `bytes`.
    struct Line {
        var nameStart: UInt32
        var nameCount: UInt32
        var valueStart: UInt32
        var valueCount: UInt32
    }

    private var bytes: [UInt8] = []
    private var lines: [Line] = []

    /// No lines.
    public init() {}

    /// The lines of `fields`, in order (requests made by tests, and by clients that are not sockets).
    public init(_ fields: HTTPFields) {
        for field in fields {
            var name = field.name.rawName
            var value = field.value
            name.withUTF8 { name in
                value.withUTF8 { value in
                    append(name: Self.chars(name.baseAddress), nameCount: name.count, value: Self.chars(value.baseAddress), valueCount: value.count)
                }
            }
        }
    }

    /// Room for `lines` lines of `bytes` bytes, made once.
    mutating func reserve(lines: Int, bytes: Int) {
        self.lines.reserveCapacity(lines)
        self.bytes.reserveCapacity(bytes)
    }

    /// Adds a line: `nameCount` bytes of name at `name`, `valueCount` of value at `value`.
    /// A name that is not a token is left out.
    mutating func append(name: UnsafePointer<CChar>?, nameCount: Int, value: UnsafePointer<CChar>?, valueCount: Int) {
        guard let name, nameCount > 0 else { return }
        let nameBytes = UnsafeRawBufferPointer(start: name, count: nameCount)
        guard Self.isToken(nameBytes) else { return }
        var first = 0
        var last = valueCount
        if let value {
            while first < last, value[first] == 0x20 || value[first] == 0x09 { first += 1 }
            while last > first, value[last - 1] == 0x20 || value[last - 1] == 0x09 { last -= 1 }
        }
        let nameStart = bytes.count
        bytes.append(contentsOf: nameBytes)
        let valueStart = bytes.count
        if let value, last > first { bytes.append(contentsOf: UnsafeRawBufferPointer(start: value + first, count: last - first)) }
        lines.append(
            Line(nameStart: UInt32(nameStart), nameCount: UInt32(nameCount), valueStart: UInt32(valueStart), valueCount: UInt32(bytes.count - valueStart)))
    }

    /// The number of lines.
    public var count: Int { lines.count }

    /// Every kept line's name and value, in order (for the fuzz harness, through `LoopHead`).
    var linesAsSent: [(name: [UInt8], value: [UInt8])] {
        lines.map { line in
            (
                Array(bytes[Int(line.nameStart)..<Int(line.nameStart + line.nameCount)]),
                Array(bytes[Int(line.valueStart)..<Int(line.valueStart + line.valueCount)])
            )
        }
    }

    /// The first value of `name`, or nil when no line has it.
    public subscript(name: HTTPField.Name) -> String? {
        var found: String?
        forEachValue(of: name) { value in
            found = String(decoding: value, as: UTF8.self)
            return false
        }
        return found
    }

    /// Every value of `name`, in the order sent.
    public subscript(values name: HTTPField.Name) -> [String] {
        var values: [String] = []
        forEachValue(of: name) { value in
            values.append(String(decoding: value, as: UTF8.self))
            return true
        }
        return values
    }

    /// Hands `body` the bytes of each value of `name`, in the order sent, until it returns false.
    ///
    /// The lines' names are compared with `name` as bytes, those of its length
    /// only: cheaper than naming every line as it arrives (a table of the names
    /// browsers send, looked up for each line, was 2% of a reader's page).
    public func forEachValue(of name: HTTPField.Name, _ body: (UnsafeBufferPointer<UInt8>) -> Bool) {
        bytes.withUnsafeBufferPointer { bytes in
            var wanted = name.canonicalName
            wanted.withUTF8 { wanted in
                for line in lines where Int(line.nameCount) == wanted.count {
                    guard Self.equalIgnoringCase(bytes.baseAddress! + Int(line.nameStart), UnsafeRawBufferPointer(wanted)) else { continue }
                    let value = UnsafeBufferPointer(rebasing: bytes[Int(line.valueStart)..<Int(line.valueStart + line.valueCount)])
                    if !body(value) { return }
                }
            }
        }
    }

    /// The lines as `HTTPFields`, names as sent.
    public var httpFields: HTTPFields {
        var fields = HTTPFields()
        fields.reserveCapacity(lines.count)
        for line in lines {
            let name = String(decoding: bytes[Int(line.nameStart)..<Int(line.nameStart + line.nameCount)], as: UTF8.self)
            let value = String(decoding: bytes[Int(line.valueStart)..<Int(line.valueStart + line.valueCount)], as: UTF8.self)
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        return fields
    }

    /// The bytes at `pointer` as C's characters, as `RequestHead` reads a line.
    private static func chars(_ pointer: UnsafePointer<UInt8>?) -> UnsafePointer<CChar>? {
        pointer.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }
    }

    /// Whether every byte is one RFC 9110 allows in a token (a field name).
    private static func isToken(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.allSatisfy(FirstLook.isTokenByte)
    }

    /// Whether the `lowercase.count` bytes at `sent` are `lowercase` (a canonical name), ignoring ASCII case.
    static func equalIgnoringCase(_ sent: UnsafeRawPointer, _ lowercase: UnsafeRawBufferPointer) -> Bool {
        for index in lowercase.indices {
            var byte = sent.load(fromByteOffset: index, as: UInt8.self)
            if byte >= 0x41 && byte <= 0x5a { byte |= 0x20 }
            if byte != lowercase[index] { return false }
        }
        return true
    }
}
