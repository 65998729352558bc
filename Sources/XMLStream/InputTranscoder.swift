#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns the document's bytes into clean UTF-8 for libxml2, chunk by chunk,
/// when `SourceEncoding` says the bytes are (meant to be) UTF-8 or
/// windows-1252.
///
/// - UTF-8: valid sequences pass through; each byte that is not part of one
///   is read as windows-1252, the usual cause being Latin-1 text in a feed
///   that declares UTF-8.
/// - windows-1252: every byte is decoded (the five bytes windows-1252 leaves
///   undefined become the C1 controls of the same number, as browsers do).
/// - Both: the control characters XML forbids (U+0000–U+001F but tab, line
///   feed and carriage return; U+FFFE, U+FFFF) become U+FFFD, where libxml2
///   would stop.
///
/// The first repair of each kind is reported with its line, so it counts the
/// line feeds it passes until then.
struct InputTranscoder {
    /// What a repair was, for its report.
    enum Repair: Equatable {
        case notUTF8
        case forbiddenCharacter
    }

    let encoding: SourceEncoding
    /// The start of a UTF-8 sequence a chunk ended in the middle of.
    private var pending: [UInt8] = []
    /// Line feeds passed so far; counted until both kinds of repair were seen.
    private var lineFeeds = 0
    private var reported: [Repair] = []

    init(encoding: SourceEncoding) {
        self.encoding = encoding
    }

    /// Appends `input` converted to `output`; `isFinal` flushes a sequence
    /// left incomplete at the end. `report` receives the first repair of each
    /// kind with its line.
    mutating func convert(
        _ input: UnsafeRawBufferPointer, isFinal: Bool, into output: inout [UInt8], report: (Repair, Int) -> Void
    ) {
        if pending.isEmpty {
            convertJoined(input, isFinal: isFinal, into: &output, report: report)
        } else {
            var joined = pending
            pending.removeAll()
            joined.append(contentsOf: input)
            joined.withUnsafeBytes { convertJoined($0, isFinal: isFinal, into: &output, report: report) }
        }
    }

    private mutating func convertJoined(
        _ bytes: UnsafeRawBufferPointer, isFinal: Bool, into output: inout [UInt8], report: (Repair, Int) -> Void
    ) {
        var index = 0
        var runStart = 0
        let count = bytes.count
        func flushRun(upTo end: Int) {
            if end > runStart { output.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<end])) }
        }
        func repair(_ kind: Repair, at position: Int) {
            guard !reported.contains(kind) else { return }
            reported.append(kind)
            report(kind, lineFeeds + Self.lineFeeds(in: UnsafeRawBufferPointer(rebasing: bytes[runStart..<position])) + 1)
        }
        while index < count {
            // Eight plain ASCII bytes at a time, the common case.
            if index + 8 <= count {
                let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let highBits: UInt64 = 0x8080_8080_8080_8080
                let belowSpace = (word &- 0x2020_2020_2020_2020) & ~word & highBits
                if word & highBits == 0 && belowSpace == 0 {
                    index += 8
                    continue
                }
            }
            let byte = bytes[index]
            if byte >= 0x20 && byte < 0x80 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                index += 1
                continue
            }
            if byte < 0x20 {
                flushRun(upTo: index)
                repair(.forbiddenCharacter, at: index)
                countLineFeeds(from: runStart, to: index, in: bytes)
                output.append(contentsOf: Self.replacementCharacter)
                index += 1
                runStart = index
                continue
            }
            if encoding == .utf8 {
                let length = Self.sequenceLength(bytes, at: index)
                if length > 0 {
                    if length == 3 && bytes[index] == 0xEF && bytes[index + 1] == 0xBF && bytes[index + 2] >= 0xBE {
                        flushRun(upTo: index)
                        repair(.forbiddenCharacter, at: index)
                        countLineFeeds(from: runStart, to: index, in: bytes)
                        output.append(contentsOf: Self.replacementCharacter)
                        index += 3
                        runStart = index
                    } else {
                        index += length
                    }
                    continue
                }
                if length < 0 && !isFinal {
                    // A valid start cut by the end of the chunk: keep it for the next one.
                    flushRun(upTo: index)
                    countLineFeeds(from: runStart, to: index, in: bytes)
                    pending = Array(UnsafeRawBufferPointer(rebasing: bytes[index...]))
                    return
                }
                flushRun(upTo: index)
                repair(.notUTF8, at: index)
            } else {
                flushRun(upTo: index)
            }
            countLineFeeds(from: runStart, to: index, in: bytes)
            Self.appendWindows1252(byte, to: &output)
            index += 1
            runStart = index
        }
        flushRun(upTo: count)
        countLineFeeds(from: runStart, to: count, in: bytes)
    }

    private mutating func countLineFeeds(from start: Int, to end: Int, in bytes: UnsafeRawBufferPointer) {
        guard reported.count < 2, end > start else { return }
        lineFeeds += Self.lineFeeds(in: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
    }

    private static func lineFeeds(in bytes: UnsafeRawBufferPointer) -> Int {
        guard var cursor = bytes.baseAddress else { return 0 }
        let end = cursor + bytes.count
        var count = 0
        while cursor < end, let found = memchr(cursor, 0x0A, end - cursor) {
            count += 1
            cursor = UnsafeRawPointer(found) + 1
        }
        return count
    }

    /// The length of the valid UTF-8 sequence at `index` (2…4), 0 when the
    /// bytes there are not one, -1 when they are a valid start cut by the end.
    private static func sequenceLength(_ bytes: UnsafeRawBufferPointer, at index: Int) -> Int {
        let lead = bytes[index]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: return 0
        }
        for offset in 1..<length {
            guard index + offset < bytes.count else { return -1 }
            let byte = bytes[index + offset]
            let (min, max) = offset == 1 ? (low, high) : (0x80, 0xBF)
            guard byte >= min && byte <= max else { return 0 }
        }
        return length
    }

    private static let replacementCharacter: [UInt8] = [0xEF, 0xBF, 0xBD]

    /// Code points of windows-1252's 0x80–0x9F; the rest of its upper half is Latin-1.
    private static let windows1252High: [UInt32] = [
        0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D,
        0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A,
        0x0153, 0x009D, 0x017E, 0x0178,
    ]

    private static func appendWindows1252(_ byte: UInt8, to output: inout [UInt8]) {
        let scalar = byte < 0xA0 ? windows1252High[Int(byte) - 0x80] : UInt32(byte)
        output.append(contentsOf: String(Unicode.Scalar(scalar)!).utf8)
    }
}
