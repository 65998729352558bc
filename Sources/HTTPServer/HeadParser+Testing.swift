/// The loop's head reader over bytes a test hands it, for the fuzz harness
/// (`Fuzz/Sources/FuzzHeadParser`): public only to
/// `@_spi(Testing) import HTTPServer`.
@_spi(Testing) public enum LoopHead {
    /// What the loop makes of one head.
    public struct Verdict {
        /// The refusal, when the head is refused.
        public var problem: (status: Int, message: String)?
        /// The rest, when it is not.
        public var method = "", target = ""
        public var isHTTP11 = false, closes = false, expectsContinue = false, isChunked = false
        public var declaredLength: Int?
        /// The kept lines, names and values as bytes.
        public var fields: [(name: [UInt8], value: [UInt8])] = []
        /// Whether every byte past the head was left as it was (the head is read in place).
        public var leftTheRestAlone = true
    }

    /// Where the head at the start of `bytes[..<count]` ends, looking from
    /// `from` on, as the loop looks again each time more bytes arrive.
    public static func end(of bytes: [UInt8], count: Int, from: Int) -> Int? {
        bytes.withUnsafeBufferPointer { HeadParser.end(of: $0.baseAddress!, count: count, from: from) }
    }

    /// Reads and judges `bytes[..<length]`, which `end` found whole, in a copy of `bytes`.
    public static func read(_ bytes: [UInt8], length: Int, maxHeaderCount: Int) -> Verdict {
        var copy = bytes
        var verdict = Verdict()
        copy.withUnsafeMutableBufferPointer { buffer in
            switch HeadParser.check(buffer.baseAddress!, length: length, maxHeaderCount: maxHeaderCount) {
            case .failure(let problem):
                verdict.problem = (problem.status, problem.message)
            case .success(let head):
                (verdict.method, verdict.target, verdict.isHTTP11) = (head.method, head.target, head.version == .http11)
                (verdict.closes, verdict.expectsContinue) = (head.closes, head.expectsContinue)
                (verdict.isChunked, verdict.declaredLength) = (head.lines.head.isChunked, head.lines.head.declaredLength)
                verdict.fields = head.lines.fields.linesAsSent
            }
        }
        verdict.leftTheRestAlone = copy[length...].elementsEqual(bytes[length...])
        return verdict
    }
}
