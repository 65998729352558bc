// RequestHead, the RFC 9112 head check every request passes, on any head a
// client can send. The head is cut into lines the way libmicrohttpd hands
// them over (HeadLines), noted through C strings as the server notes them,
// and the verdict must be the one the rules written out plainly give
// (ReferenceRules): the same status, or none.

import FuzzSupport
@_spi(Testing) import HTTPServer
import HeadRules

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestHead(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    checkFirstLook(fuzzInput(data, count))
    // A head libmicrohttpd refuses itself never reaches the check.
    guard let head = HeadLines(fuzzInput(data, count)) else { return 0 }
    var rules = RequestHead()
    for field in head.fields {
        withCString(field.name) { name in withCString(field.value) { value in rules.note(name: name, value: value) } }
    }
    let problem = head.version.map { withCString($0) { rules.problem(version: $0) } } ?? rules.problem(version: nil)
    let expected = ReferenceRules.status(head)
    check(
        problem?.status == expected,
        "RequestHead: \(problem.map { "\($0.status) \($0.message)" } ?? "passes"); the rules: \(expected.map(String.init) ?? "passes"); for \(head)")
    check(problem.map { !$0.message.isEmpty } ?? true, "a problem with no message")
    return 0
}

/// FirstLook, the look at a new connection's first bytes: it judges what has
/// arrived, so more bytes never clear a head it refused nor change why, a
/// refusal is a 400, 413 or 431 with a reason, and a NUL in the request line
/// is always refused.
func checkFirstLook(_ bytes: [UInt8]) {
    let whole = bytes.withUnsafeBytes { FirstLook($0) }
    for cut in [bytes.count / 2, bytes.count * 3 / 4] {
        let part = bytes[..<cut].withUnsafeBytes { FirstLook($0) }
        check(part == .fine || part == whole, "FirstLook refused \(cut) bytes as \(part), but all \(bytes.count) as \(whole)")
    }
    if let (status, message) = whole.answer {
        check([400, 413, 431].contains(status) && !message.isEmpty, "FirstLook answers \(status) \(message.debugDescription)")
    }
    let firstLine = bytes.drop { $0 == 0x0D || $0 == 0x0A }.prefix { $0 != 0x0A }
    if firstLine.contains(0) {
        check(whole == .malformed, "FirstLook passed a NUL in the request line")
    }
}
