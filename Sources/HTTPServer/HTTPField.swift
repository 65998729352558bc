/// One header line of a request or a response.
public struct HTTPField: Sendable, Hashable {
    /// The header name as sent; compare it case-insensitively.
    public var name: String
    /// The header value.
    public var value: String

    /// Makes a header line.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

extension Array where Element == HTTPField {
    /// The first value of the header `name`, compared without regard to case.
    public subscript(field name: String) -> String? {
        for field in self where field.name.utf8.count == name.utf8.count {
            if field.name.lowercased() == name.lowercased() { return field.value }
        }
        return nil
    }
}
