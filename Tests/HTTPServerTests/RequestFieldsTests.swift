import Glibc
import HTTPTestClient
import HTTPTypes
import Testing

@testable import HTTPServer

/// A request's lines are kept as sent and read by name when asked: the same
/// answers `HTTPFields` gave, without making a field of every line.
@Suite struct RequestFieldsTests {
    /// Lines handed over as the server hands them: a name's and a value's bytes and lengths.
    static func fields(_ lines: [(String, String?)]) -> RequestFields {
        var fields = RequestFields()
        for (name, value) in lines {
            name.withCString { name in
                if let value {
                    value.withCString { value in fields.append(name: name, nameCount: strlen(name), value: value, valueCount: strlen(value)) }
                } else {
                    fields.append(name: name, nameCount: strlen(name), value: nil, valueCount: 0)
                }
            }
        }
        return fields
    }

    @Test func namesAreFoundInAnyCaseCommonOrCustom() {
        let fields = Self.fields([("COOKIE", "wf=1"), ("X-Custom", "yes"), ("sec-ch-dpr", "2"), ("x-CUSTOM", "again")])
        #expect(fields[.cookie] == "wf=1")
        #expect(fields[.secCHDPR] == "2")
        #expect(fields[HTTPField.Name("x-custom")!] == "yes")
        #expect(fields[values: HTTPField.Name("X-Custom")!] == ["yes", "again"])
        #expect(fields[.accept] == nil)
        #expect(fields[HTTPField.Name("x-custo")!] == nil)
        #expect(fields[HTTPField.Name("x-customs")!] == nil)
        #expect(fields.count == 4)
    }

    /// As `HTTPField(name:value:)` keeps a value: without the spaces and tabs around it.
    @Test func valuesLoseTheWhiteSpaceAroundThem() {
        let fields = Self.fields([("Accept", " \t text/html ,  */* \t"), ("X-Empty", "   "), ("X-None", nil), ("Host", "a")])
        #expect(fields[.accept] == "text/html ,  */*")
        #expect(fields[HTTPField.Name("x-empty")!] == "")
        #expect(fields[HTTPField.Name("x-none")!] == "")
        #expect(fields[HTTPField.Name("Host")!] == "a")
    }

    /// A name `HTTPField.Name` refuses is left out, as it was when every line became a field.
    @Test func aNameThatIsNotATokenIsLeftOut() {
        let fields = Self.fields([("Bad(Name)", "x"), ("", "y"), ("Good", "z")])
        #expect(fields.count == 1)
        #expect(fields.httpFields == [HTTPField.Name("Good")!: "z"])
    }

    /// Made into `HTTPFields` and back, the lines are the same, in order, with their values.
    @Test func theLinesMakeTheSameHTTPFields() {
        let sent: HTTPFields = [HTTPField.Name("Host")!: "x", .cookie: "a=1", .cookie: "b=2", HTTPField.Name("X-Last")!: "end", .acceptEncoding: "gzip, br"]
        let fields = RequestFields(sent)
        #expect(fields.httpFields == sent)
        #expect(fields[values: .cookie] == ["a=1", "b=2"])
        #expect(Request(path: "/", headers: sent).cookies(named: "b") == ["2"])
        #expect(Request(path: "/", headers: sent).acceptsGzip)
    }

    /// Non-ASCII bytes in a value come back as `String(decoding:)` reads them, as before.
    @Test func bytesPastASCIIAreDecodedAsBefore() {
        let fields = Self.fields([("X-Name", "caf\u{e9}"), ("X-Raw", String(decoding: [0x61, 0x62], as: UTF8.self))])
        #expect(fields[HTTPField.Name("x-name")!] == "caf\u{e9}")
        #expect(fields[HTTPField.Name("x-raw")!] == "ab")
    }

    /// Through the real server: a browser's head, every line read back by name, and the whole as `HTTPFields`.
    @Test func aBrowsersHeadReadsBackThroughTheServer() async throws {
        try await withServer(router: { router in
            router.get("/") { request in
                let seen = [
                    request.header(.cookie), request.header(.secFetchMode), request.header(.acceptEncoding), request.header("X-Custom"),
                    request.header(.ifNoneMatch), "\(request.headers.count)",
                ]
                return .now(.plain(200, seen.map { $0 ?? "-" }.joined(separator: "|")))
            }
        }) { server in
            let connection = try TestConnection(port: server.port)
            try connection.send(
                "GET / HTTP/1.1\r\nHost: x\r\nCookie: wf=0123456789abcdef\r\nSec-Fetch-Mode:navigate\r\n"
                    + "Accept-Encoding:   gzip, deflate, br, zstd   \r\nx-custom: yes\r\n\r\n")
            let response = try connection.readResponse()
            #expect(response.status == 200)
            #expect(response.text == "wf=0123456789abcdef|navigate|gzip, deflate, br, zstd|yes|-|5\n")
        }
    }

    /// Through the real server: names as sent, in any case, read back by the name's canonical form.
    @Test func namesInAnyCaseThroughTheServer() async throws {
        try await withServer(router: { router in
            router.get("/") { request in
                let seen = [request.header(.cookie), request.header(.secCHDPR), request.header("X-Custom"), request.header(.userAgent)]
                return .now(.plain(200, seen.map { $0 ?? "-" }.joined(separator: "|")))
            }
        }) { server in
            let connection = try TestConnection(port: server.port)
            try connection.send(
                "GET / HTTP/1.1\r\nHost: x\r\nCOOKIE: wf=0123456789abcdef\r\nsec-ch-dpr: 2\r\nx-custom: yes\r\nUser-agent: test\r\n\r\n")
            let response = try connection.readResponse()
            #expect(response.status == 200)
            #expect(response.text == "wf=0123456789abcdef|2|yes|test\n")
        }
    }
}
