import Glibc
import HTTPTestClient
import HTTPTypes
import Testing

@testable import HTTPServer

/// A request's common header names come from a table made once, matched by
/// their bytes in any case; every other name is made as it always was.
@Suite struct KnownFieldNamesTests {
    /// The table's name for `text`, handed over as the server hands a line's name: its bytes and length.
    static func name(_ text: String) -> HTTPField.Name? {
        text.withCString { KnownFieldNames.index($0, length: strlen($0)).map { KnownFieldNames.names[Int($0)] } }
    }

    @Test func commonNamesAreFoundInAnyCase() {
        #expect(Self.name("User-Agent") == .userAgent)
        #expect(Self.name("cookie") == .cookie)
        #expect(Self.name("SEC-CH-DPR") == .secCHDPR)
        #expect(Self.name("Sec-Fetch-Mode") == .secFetchMode)
        #expect(Self.name("accept-ENCODING") == .acceptEncoding)
        #expect(Self.name("If-None-Match") == .ifNoneMatch)
    }

    @Test func otherNamesAreLeftToBeMade() {
        for other in ["", "hos", "hostx", "x-custom", "cookie2", "sec-ch-dpr ", "acceptencoding", "Accept_Encoding"] {
            #expect(Self.name(other) == nil, "\(other)")
        }
    }

    /// Through the real server: the fields a handler sees, named from the table or not.
    @Test func aRequestsFieldsAreNamedAsSent() async throws {
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
