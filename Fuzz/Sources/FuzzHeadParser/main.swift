// HeadParser, the server's own loop reading a head out of a connection's
// buffer, on any bytes a client can send. Where it finds the head's end (all
// at once, and again as more bytes arrive), what it refuses and with which
// status, and what it hands a handler must be what the rules written out
// plainly give (LoopReference, over RFC 9112's ReferenceRules); and it reads
// the head in place without touching a byte past it.

import FuzzSupport
@_spi(Testing) import HTTPServer
import HeadRules

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHeadParser(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    // The loop skips the empty lines before a head (RFC 9112 §2.2).
    let bytes = Array(fuzzInput(data, count).drop { $0 == 0x0D || $0 == 0x0A })
    guard !bytes.isEmpty else { return 0 }
    let end = LoopHead.end(of: bytes, count: bytes.count, from: 0)
    check(end == LoopReference.end(of: bytes), "the head ends at \(String(describing: end)), not \(String(describing: LoopReference.end(of: bytes)))")
    // Arrived in two parts: an end found in the first is the end; else the
    // look again from where the loop left off finds what a look from the start does.
    for cut in [bytes.count / 3, bytes.count / 2, bytes.count - 1] where cut > 0 {
        if let early = LoopHead.end(of: bytes, count: cut, from: 0) {
            check(early == end, "\(cut) bytes end at \(early), all of them at \(String(describing: end))")
        } else {
            let again = LoopHead.end(of: bytes, count: bytes.count, from: max(0, cut - 2))
            check(again == end, "looked at again from \(cut - 2), the head ends at \(String(describing: again)), not \(String(describing: end))")
        }
    }
    guard let end else { return 0 }
    let maxHeaderCount = 8
    let verdict = LoopHead.read(bytes, length: end, maxHeaderCount: maxHeaderCount)
    let expected = LoopReference(Array(bytes[..<end]), maxHeaderCount: maxHeaderCount)
    let head = String(decoding: bytes[..<end], as: UTF8.self).debugDescription
    check(verdict.leftTheRestAlone, "a byte past the head was changed: \(head)")
    check(
        verdict.problem?.status == expected.status,
        "\(verdict.problem.map { "\($0.status) \($0.message)" } ?? "passes"); the rules: \(expected.status.map(String.init) ?? "passes"); for \(head)")
    if let problem = verdict.problem {
        check(
            [400, 413, 431, 501, 505].contains(problem.status) && !problem.message.isEmpty, "refused as \(problem.status) \(problem.message.debugDescription)")
        return 0
    }
    check(
        // A target is read as UTF-8, a byte that is not replaced (RequestTarget then judges it).
        verdict.method == String(decoding: expected.method, as: UTF8.self) && verdict.target == String(decoding: expected.target, as: UTF8.self)
            && verdict.isHTTP11 == expected.isHTTP11,
        "read as \(verdict.method) \(verdict.target) (HTTP/1.1: \(verdict.isHTTP11)), for \(head)")
    check(verdict.closes == expected.closes, "closes: \(verdict.closes), the rules: \(expected.closes), for \(head)")
    check(verdict.expectsContinue == expected.expectsContinue, "expects 100-continue: \(verdict.expectsContinue), for \(head)")
    check(verdict.isChunked == expected.isChunked, "chunked: \(verdict.isChunked), for \(head)")
    check(verdict.declaredLength == expected.declaredLength, "a body of \(String(describing: verdict.declaredLength)), for \(head)")
    check(
        verdict.fields.count == expected.fields.count && zip(verdict.fields, expected.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value },
        "the lines kept: \(verdict.fields.map { String(decoding: $0.name, as: UTF8.self) + ": " + String(decoding: $0.value, as: UTF8.self) }), for \(head)")
    return 0
}
