import Foundation

/// One JSON value of a feed item, decoded without a schema so that a field of
/// the wrong type can be named in a problem instead of failing the whole item
/// with a generic decoding error.
enum JSONValue: Decodable, Equatable {
    case null
    case bool(Bool)
    /// A number, as its decimal text ("12", "1.5"): ids are often numbers, and
    /// a `Double` would round the long ones.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The value's kind with its article, for problems: "a number", "an object".
    var kind: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: Decoder) throws {
        let single = try decoder.singleValueContainer()
        // Each wrong guess throws, so guess what is likeliest where we are:
        // an item is an object, and most of its members are strings.
        if single.decodeNil() {
            self = .null
        } else if decoder.codingPath.isEmpty, let members = try Self.members(decoder) {
            self = .object(members)
        } else if let string = try? single.decode(String.self) {
            self = .string(string)
        } else if let members = try Self.members(decoder) {
            self = .object(members)
        } else if let bool = try? single.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? single.decode(Decimal.self) {
            self = .number(number.description)
        } else if let elements = try? decoder.singleValueContainer().decode([JSONValue].self) {
            self = .array(elements)
        } else {
            // The document's syntax was already checked as a whole, so what is
            // left is a string Foundation refuses to decode.
            throw DecodingError.dataCorruptedError(
                in: single, debugDescription: "a string with a lone surrogate escape or a raw control character")
        }
    }

    /// The members of the object `decoder` holds, or nil when it holds something else.
    private static func members(_ decoder: Decoder) throws -> [String: JSONValue]? {
        guard let keyed = try? decoder.container(keyedBy: Key.self) else { return nil }
        var members: [String: JSONValue] = [:]
        for key in keyed.allKeys {
            members[key.stringValue] = try keyed.decode(JSONValue.self, forKey: key)
        }
        return members
    }
}
