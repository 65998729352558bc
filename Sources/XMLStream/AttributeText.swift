/// Attribute values as libxml2 hands them to a SAX2 handler that does not
/// substitute entities: character references are already decoded, except
/// `&` itself which stays `&#38;`, and HTML names stay `&eacute;` (see
/// `EntityShelf`). This finishes the job in one pass, so `&amp;eacute;` in
/// the source comes out as the text `&eacute;`, not as `é`.
enum AttributeText {
    /// The value of the UTF-8 bytes `value`.
    static func decode(_ value: UnsafeBufferPointer<UInt8>) -> String {
        guard value.contains(UInt8(ascii: "&")) else { return String(decoding: value, as: UTF8.self) }
        var output: [UInt8] = []
        output.reserveCapacity(value.count)
        var index = 0
        while index < value.count {
            let byte = value[index]
            if byte == UInt8(ascii: "&"), let semicolon = value[index...].prefix(40).firstIndex(of: UInt8(ascii: ";")),
                let scalar = scalar(for: value[(index + 1)..<semicolon])
            {
                output.append(contentsOf: String(scalar).utf8)
                index = semicolon + 1
            } else {
                output.append(byte)
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The character `&name;` or `&#…;` stands for.
    private static func scalar(for reference: Slice<UnsafeBufferPointer<UInt8>>) -> Unicode.Scalar? {
        let name = String(decoding: reference, as: UTF8.self)
        if name.hasPrefix("#x") || name.hasPrefix("#X") {
            return UInt32(name.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
        }
        if name.hasPrefix("#") { return UInt32(name.dropFirst()).flatMap(Unicode.Scalar.init) }
        switch name {
        case "amp": return "&"
        case "lt": return "<"
        case "gt": return ">"
        case "quot": return "\""
        case "apos": return "'"
        default: return HTMLEntities.codePoints[name].flatMap(Unicode.Scalar.init)
        }
    }
}
