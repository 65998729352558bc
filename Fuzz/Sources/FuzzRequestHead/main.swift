// RequestHead, the RFC 9112 head check every request passes, on any head a
// client can send. The head is cut into lines the way libmicrohttpd hands
// them over (HeadLines), noted through C strings as the server notes them,
// and the verdict must be the one the rules written out plainly give
// (ReferenceRules): the same status, or none.
@_spi(Testing) import HTTPServer
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestHead(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
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
