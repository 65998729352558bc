import Foundation

/// Walks the bytes of a JSON Feed document chunk by chunk, keeping only what
/// the parser asks for: the raw JSON of a few top-level members and of each
/// element of `items`, one at a time. Everything else is scanned past without
/// being kept, so memory stays bounded whatever the size of the document.
///
/// The scanner checks the structure of the top-level object and of the
/// `items` array; the inside of a kept value is checked when it is decoded.
struct JSONFeedScanner {
    /// What the scanner found.
    enum Event {
        /// A top-level member the parser asked for, as raw JSON; nil when it
        /// was larger than the byte limit.
        case member(name: String, json: [UInt8]?, line: Int)
        /// The `index`th element of `items` (1-based), as raw JSON; nil when it
        /// was larger than the byte limit.
        case item(index: Int, json: [UInt8]?, line: Int)
    }

    /// Why the document cannot be read on from here, with the line.
    struct SyntaxError: Error, Equatable {
        var message: String
        var line: Int
    }

    private enum State {
        case start, keyOrEnd, colon, memberValue, memberEnd, itemOrEnd, itemEnd, end, inValue
    }

    private enum Target: Equatable {
        case key, member(String), skip, item
    }

    /// The top-level members whose values are kept and reported.
    let members: Set<String>
    /// The most bytes one kept value may have.
    let byteLimit: Int

    /// The current line (1-based).
    private(set) var line = 1
    /// Whether the `items` array has begun.
    private(set) var sawItems = false
    /// How many elements of `items` have begun.
    private(set) var itemCount = 0

    private var state = State.start
    private var startBytes = 0
    private var markBytes = 0
    private var key = ""
    // The value in progress.
    private var target = Target.skip
    private var valueLine = 0
    private var depth = 0
    private var inString = false
    private var escaped = false
    private var scalar = false
    private var overflow = false
    private var kept: [UInt8] = []

    /// A scanner keeping `members` and the items, each up to `byteLimit` bytes.
    init(members: Set<String>, byteLimit: Int) {
        self.members = members
        self.byteLimit = byteLimit
    }

    /// Scans the next chunk, calling `handle` for each member or item it completes.
    mutating func feed(_ chunk: UnsafeRawBufferPointer, _ handle: (Event) throws -> Void) throws {
        var index = 0
        while index < chunk.count {
            if state == .inValue {
                index = try scanValue(chunk, from: index, handle)
                continue
            }
            let byte = chunk[index]
            index += 1
            if state == .start {
                // A UTF-8 byte order mark: some servers write one.
                let isMark = startBytes < 3 && markBytes == startBytes && byte == [0xEF, 0xBB, 0xBF][startBytes]
                startBytes += 1
                if isMark { markBytes += 1; continue }
            }
            switch byte {
            case ASCII.newline: line += 1
            case ASCII.space, ASCII.tab, ASCII.carriageReturn: break
            default: try structural(byte)
            }
        }
    }

    /// Ends the scan: throws when the document stopped before its end.
    mutating func finish() throws {
        switch state {
        case .end:
            return
        case .start:
            throw SyntaxError(message: "empty source", line: line)
        case .inValue where target == .item:
            throw SyntaxError(message: "truncated: the document ends inside item \(itemCount)", line: valueLine)
        case .itemOrEnd, .itemEnd:
            throw SyntaxError(message: "truncated: the document ends after item \(itemCount), inside \"items\"", line: line)
        default:
            let place = sawItems ? "after \"items\"" : "before \"items\""
            throw SyntaxError(message: "truncated: the document ends \(place)", line: line)
        }
    }

    /// One byte between values: the structure of the top-level object and of `items`.
    private mutating func structural(_ byte: UInt8) throws {
        switch state {
        case .start:
            guard byte == ASCII.openBrace else { throw SyntaxError(message: Self.notAnObject(byte), line: line) }
            state = .keyOrEnd
        case .keyOrEnd:
            if byte == ASCII.closeBrace {
                state = .end
            } else if byte == ASCII.quote {
                try begin(byte, .key)
            } else {
                throw syntax("expected a member name")
            }
        case .colon:
            guard byte == ASCII.colon else { throw syntax("expected ':' after \"\(key)\"") }
            state = .memberValue
        case .memberValue:
            if key == "items" {
                guard byte == ASCII.openBracket else { throw SyntaxError(message: "\"items\" is not an array", line: line) }
                sawItems = true
                state = .itemOrEnd
            } else {
                try begin(byte, members.contains(key) ? .member(key) : .skip)
            }
        case .memberEnd:
            if byte == ASCII.comma {
                state = .keyOrEnd
            } else if byte == ASCII.closeBrace {
                state = .end
            } else {
                throw syntax("expected ',' or '}' after \"\(key)\"")
            }
        case .itemOrEnd:
            if byte == ASCII.closeBracket {
                state = .memberEnd
            } else {
                itemCount += 1
                try begin(byte, .item)
            }
        case .itemEnd:
            if byte == ASCII.comma {
                state = .itemOrEnd
            } else if byte == ASCII.closeBracket {
                state = .memberEnd
            } else {
                throw syntax("expected ',' or ']' after item \(itemCount)")
            }
        case .end:
            throw SyntaxError(message: "content after the end of the JSON document, ignored", line: line)
        case .inValue:
            preconditionFailure("values are scanned by scanValue")
        }
    }

    /// Starts a value whose first byte is `byte`.
    private mutating func begin(_ byte: UInt8, _ newTarget: Target) throws {
        switch byte {
        case ASCII.quote: inString = true
        case ASCII.openBrace, ASCII.openBracket: depth = 1
        case ASCII.minus, ASCII.zero...ASCII.nine, UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"): scalar = true
        default: throw syntax("expected a value, found \(Self.describe(byte))")
        }
        target = newTarget
        valueLine = line
        state = .inValue
        if target != .skip { kept.append(byte) }
    }

    /// Scans the value in progress from `start`; returns where scanning stopped
    /// (the chunk's end, or just after the value).
    private mutating func scanValue(
        _ chunk: UnsafeRawBufferPointer, from start: Int, _ handle: (Event) throws -> Void
    ) throws -> Int {
        var index = start
        var ended = false
        scan: while index < chunk.count {
            let byte = chunk[index]
            if scalar {
                // A number, true, false or null ends at the byte after it, which is not its own.
                switch byte {
                case ASCII.space, ASCII.tab, ASCII.newline, ASCII.carriageReturn, ASCII.comma,
                    ASCII.closeBrace, ASCII.closeBracket:
                    ended = true
                    break scan
                default: break
                }
            }
            index += 1
            if byte == ASCII.newline { line += 1 }
            if inString {
                if escaped {
                    escaped = false
                } else if byte == ASCII.backslash {
                    escaped = true
                } else if byte == ASCII.quote {
                    inString = false
                    if depth == 0 { ended = true; break scan }
                }
            } else if !scalar {
                switch byte {
                case ASCII.quote: inString = true
                case ASCII.openBrace, ASCII.openBracket: depth += 1
                case ASCII.closeBrace, ASCII.closeBracket:
                    depth -= 1
                    if depth == 0 { ended = true; break scan }
                default: break
                }
            }
        }
        keep(UnsafeRawBufferPointer(rebasing: chunk[start..<index]))
        if ended { try endValue(handle) }
        return index
    }

    /// Adds `bytes` to the value kept, until it passes the limit.
    private mutating func keep(_ bytes: UnsafeRawBufferPointer) {
        guard target != .skip, !overflow, !bytes.isEmpty else { return }
        if kept.count + bytes.count > byteLimit {
            overflow = true
            kept = []
        } else {
            kept.append(contentsOf: bytes)
        }
    }

    private mutating func endValue(_ handle: (Event) throws -> Void) throws {
        let json = overflow ? nil : kept
        let finished = target
        (depth, inString, escaped, scalar, overflow) = (0, false, false, false, false)
        kept.removeAll(keepingCapacity: true)
        switch finished {
        case .key:
            key = json.map(Self.memberName) ?? ""
            state = .colon
        case .skip:
            state = .memberEnd
        case .member(let name):
            state = .memberEnd
            try handle(.member(name: name, json: json, line: valueLine))
        case .item:
            state = .itemEnd
            try handle(.item(index: itemCount, json: json, line: valueLine))
        }
    }

    private func syntax(_ expectation: String) -> SyntaxError {
        SyntaxError(message: "not valid JSON: \(expectation)", line: line)
    }

    /// A member name from its quoted JSON.
    private static func memberName(_ json: [UInt8]) -> String {
        if !json.contains(ASCII.backslash) { return String(decoding: json.dropFirst().dropLast(), as: UTF8.self) }
        return (try? JSONDecoder().decode(String.self, from: Data(json))) ?? ""
    }

    /// Why a document starting with `byte` is not a JSON Feed.
    private static func notAnObject(_ byte: UInt8) -> String {
        switch byte {
        case UInt8(ascii: "<"): return "an HTML or XML document, not a JSON Feed"
        case ASCII.openBracket: return "not a JSON Feed: the top level is an array, not an object"
        case ASCII.quote: return "not a JSON Feed: the top level is a string, not an object"
        case ASCII.minus, ASCII.zero...ASCII.nine: return "not a JSON Feed: the top level is a number, not an object"
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            return "not a JSON Feed: the top level is not an object"
        default: return "not JSON: the document starts with \(describe(byte))"
        }
    }

    private static func describe(_ byte: UInt8) -> String {
        (0x21..<0x7F).contains(byte) ? "'\(Character(UnicodeScalar(byte)))'" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }
}

/// The bytes JSON's structure is made of.
private enum ASCII {
    static let newline = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
    static let tab = UInt8(ascii: "\t")
    static let space = UInt8(ascii: " ")
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
    static let openBracket = UInt8(ascii: "[")
    static let closeBracket = UInt8(ascii: "]")
    static let colon = UInt8(ascii: ":")
    static let comma = UInt8(ascii: ",")
    static let minus = UInt8(ascii: "-")
    static let zero = UInt8(ascii: "0")
    static let nine = UInt8(ascii: "9")
}
