import HTTPTestClient
import HTTPTypes
import Testing

@testable import HTTPServer

/// A request's common header names come from a table made once, matched by
/// their bytes in any case; every other name is made as it always was.
@Suite struct KnownFieldNamesTests {
    @Test func commonNamesAreFoundInAnyCase() {
        #expect(KnownFieldNames.name("User-Agent") == .userAgent)
        #expect(KnownFieldNames.name("cookie") == .cookie)
        #expect(KnownFieldNames.name("SEC-CH-DPR") == .secCHDPR)
        #expect(KnownFieldNames.name("Sec-Fetch-Mode") == .secFetchMode)
        #expect(KnownFieldNames.name("accept-ENCODING") == .acceptEncoding)
        #expect(KnownFieldNames.name("If-None-Match") == .ifNoneMatch)
    }

    @Test func otherNamesAreLeftToBeMade() {
        for other in ["", "hos", "hostx", "x-custom", "cookie2", "sec-ch-dpr ", "acceptencoding", "Accept_Encoding"] {
            #expect(KnownFieldNames.name(other) == nil, "\(other)")
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
