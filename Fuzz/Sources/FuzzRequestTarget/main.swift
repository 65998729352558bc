// RequestTarget.parse on any target a client can send. It either refuses the
// target with 400 (414 exactly when it is too long), or returns a path and
// query the routes and the static-file lookup can trust: starting with /, no
// `.` or `..` segment, no backslash, no NUL; and decoding is exact, so the
// target re-encoded from what was parsed parses back to the same thing.
import FuzzSupport
import HTTPServer

/// Short, so that libFuzzer's inputs (4 KB at most by default) also reach the 414.
let maxLength = 512

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestTarget(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    // The server takes the target from libmicrohttpd's C string: cut at the
    // first NUL, bytes that are not UTF-8 replaced (`String(cString:)`).
    let bytes = fuzzInput(data, count).prefix { $0 != 0 }
    let raw = String(decoding: bytes, as: UTF8.self)
    let target: RequestTarget
    do {
        target = try RequestTarget.parse(raw, maxLength: maxLength)
    } catch {
        check(error.status == 400 || error.status == 414, "status \(error.status) for \(raw.debugDescription)")
        check((error.status == 414) == (raw.utf8.count > maxLength), "414 is for too long only: \(raw.debugDescription)")
        check(!error.message.isEmpty, "no message for \(raw.debugDescription)")
        return 0
    }
    check(raw.utf8.count <= maxLength, "a target over \(maxLength) bytes was taken")
    // Bytes, not Characters: "/" and a combining mark after it are one Character.
    let path = Array(target.path.utf8)
    check(path.first == UInt8(ascii: "/"), "path \(target.path.debugDescription) does not start with /")
    check(!path.contains(UInt8(ascii: "\\")), "path \(target.path.debugDescription) holds a backslash")
    for segment in path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
        check(segment != [0x2E] && segment != [0x2E, 0x2E], "path \(target.path.debugDescription) has a dot segment")
    }
    let texts = [target.path] + target.query.flatMap { [$0.name, $0.value] }
    check(!texts.contains { $0.utf8.contains(0) }, "a NUL got through in \(texts.debugDescription)")

    let again = encoded(target)
    do {
        let reparsed = try RequestTarget.parse(again, maxLength: Int.max)
        check(reparsed == target, "\(raw.debugDescription) parsed to \(target), its encoding \(again.debugDescription) to \(reparsed)")
    } catch {
        check(false, "\(again.debugDescription), encoded from what \(raw.debugDescription) parsed to, is refused: \(error.message)")
    }
    return 0
}

/// `target` written back as a raw target: every byte outside RFC 3986's
/// unreserved set percent-encoded (but the path's slashes).
func encoded(_ target: RequestTarget) -> String {
    var out = percentEncoded(target.path, keeping: UInt8(ascii: "/"))
    if !target.query.isEmpty {
        out += "?" + target.query.map { percentEncoded($0.name) + "=" + percentEncoded($0.value) }.joined(separator: "&")
    }
    return out
}

func percentEncoded(_ text: String, keeping extra: UInt8? = nil) -> String {
    let hex = Array("0123456789ABCDEF".utf8)
    var out: [UInt8] = []
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), extra:
            out.append(byte)
        default:
            out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
        }
    }
    return String(decoding: out, as: UTF8.self)
}
