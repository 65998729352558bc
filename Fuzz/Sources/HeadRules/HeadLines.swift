/// A request head cut the way libmicrohttpd 0.9.75 hands it to the server:
/// lines end at LF (a CR before it dropped); the request line's third word is
/// the version; a header line is cut at its first colon, the name kept as
/// sent (whitespace before the colon included) and the value without the
/// blanks after the colon; a line starting with a blank continues the value
/// before it. Names and values are C strings there, so each ends at its
/// first NUL here too.
///
/// The check only ever sees C strings, so the harness is sound whether or not
/// this matches libmicrohttpd byte for byte: it only has to make the heads a
/// client can make.
public struct HeadLines: CustomStringConvertible {
    /// The request line's version (nil when the line has no third word).
    public var version: [UInt8]?
    /// The header lines in order: name and value, each without a NUL.
    public var fields: [(name: [UInt8], value: [UInt8])] = []

    /// Lines already cut (the loop's harness cuts them by its own rules).
    public init(version: [UInt8]?, fields: [(name: [UInt8], value: [UInt8])]) {
        (self.version, self.fields) = (version, fields)
    }

    /// Nil for a head libmicrohttpd answers itself (a header line without a colon).
    public init?(_ bytes: [UInt8]) {
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            line.last == 0x0D ? line.dropLast() : line
        }
        let requestLine = lines.removeFirst()
        let words = requestLine.split(separator: 0x20, maxSplits: 2, omittingEmptySubsequences: false)
        version = words.count == 3 ? Self.cString(words[2]) : nil
        for line in lines {
            if line.isEmpty { break }
            if line.first == 0x20 || line.first == 0x09 {
                guard let last = fields.indices.last else { return nil }
                fields[last].value = Self.cString(fields[last].value + [0x20] + Self.droppingBlanks(line))
                continue
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
            fields.append((Self.cString(line[..<colon]), Self.cString(Self.droppingBlanks(line[(colon + 1)...]))))
        }
    }

    private static func droppingBlanks(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        bytes.drop { $0 == 0x20 || $0 == 0x09 }
    }

    /// What a C string made of `bytes` holds: the bytes before the first NUL.
    private static func cString<C: Collection<UInt8>>(_ bytes: C) -> [UInt8] {
        Array(bytes.prefix { $0 != 0 })
    }

    public var description: String {
        let show = { (bytes: [UInt8]) in String(decoding: bytes, as: UTF8.self).debugDescription }
        return "version \(version.map(show) ?? "none"), fields "
            + fields.map { "\(show($0.name)): \(show($0.value))" }.joined(separator: ", ")
    }
}

/// Calls `body` with `bytes` (which hold no NUL) as a C string.
public func withCString<R>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> R) -> R {
    (bytes + [0]).withUnsafeBufferPointer { buffer in
        buffer.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) }
    }
}
