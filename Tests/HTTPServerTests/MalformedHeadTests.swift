import HTTPTestClient
import Testing
@_spi(Testing) @testable import HTTPServer

/// RFC 9112's rules for a request head, as a client that breaks them meets
/// them over loopback: a clear 4xx or 501 at once (the client waits at most
/// 5 s, and the answer must be there), never a 200 or a wait for a body.
@Suite struct MalformedHeadTests {
    static let cases: [(String, String, Int)] = [
        ("no Host on HTTP/1.1", "GET / HTTP/1.1\r\n\r\n", 400),
        ("two Host lines", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        ("whitespace before the colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400),
        ("Transfer-Encoding with Content-Length", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", 400),
        ("an unknown coding", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
        ("identity, which HTTP/1.1 dropped", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\n\r\n", 501),
        ("chunked twice", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 400),
        ("a bare CR in a value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\rc\r\n\r\n", 400),
        ("a raw NUL in the target", "GET /\0../secret HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("500 query parameters", "GET /?" + Array(repeating: "a=1", count: 500).joined(separator: "&") + " HTTP/1.1\r\nHost: a\r\n\r\n", 414),
        ("a chunk extension of 100 KB", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;" + String(repeating: "a", count: 100_000) + "\r\nhello\r\n0\r\n\r\n", 405),
        // Found by Fuzz/FuzzRequestHead: Unicode lowercases a Kelvin sign to "k", libmicrohttpd does not.
        ("chunked spelled with a Kelvin sign", "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chun\u{212A}ed\r\n\r\n", 501),
    ]

    @Test(arguments: cases.indices)
    func aMalformedHeadIsRefusedAtOnce(index: Int) async throws {
        let (name, head, status) = Self.cases[index]
        try await withServer(router: { $0.get("/") { _ in .now(.plain(200, "ok")) } }) { server in
            let port = server.port
            let response = try await onThread { () throws -> TestResponse in
                let connection = try TestConnection(port: port, timeout: 5)
                try connection.send(head)
                return try connection.readResponse()
            }
            #expect(response.status == status, "\(name)")
            #expect(response.text != "ok", "\(name)")
        }
    }

    @Test func wellFormedHeadsStillPass() async throws {
        try await withServer(router: { $0.get("/") { _ in .now(.plain(200, "ok")) } }) { server in
            let port = server.port
            for head in ["GET / HTTP/1.1\r\nHost: a\r\n\r\n", "GET / HTTP/1.0\r\n\r\n",
                         "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                         // 500 empty query pairs: legal, and once closed without a word by libmicrohttpd.
                         "GET /?" + String(repeating: "&", count: 500) + " HTTP/1.1\r\nHost: a\r\n\r\n"] {
                let response = try await onThread { () throws -> TestResponse in
                    let connection = try TestConnection(port: port, timeout: 5)
                    try connection.send(head)
                    return try connection.readResponse()
                }
                #expect(response.status == 200, "\(head.debugDescription)")
            }
        }
    }

    /// A chunked body is not read: the answer goes at once, also from a handler
    /// that suspends the connection while the body is still unread.
    @Test func aChunkedRequestIsAnsweredWithoutReadingItsBody() async throws {
        try await withServer(router: { router in
            router.get("/later") { _ in .later { try? await Task.sleep(for: .milliseconds(50)); return .plain(200, "later") } }
        }) { server in
            let port = server.port
            let response = try await onThread { () throws -> TestResponse in
                let connection = try TestConnection(port: port, timeout: 5)
                try connection.send("GET /later HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
                return try connection.readResponse()
            }
            #expect(response.status == 200)
            #expect(response.text.hasPrefix("later"))
            #expect(response.header("Connection") == "close")
        }
    }

    @Test func theRulesOnTheirOwn() {
        func status(_ version: String, _ fields: [(String, String)]) -> Int? {
            var head = RequestHead()
            for (name, value) in fields {
                name.withCString { name in value.withCString { value in head.note(name: name, value: value) } }
            }
            return version.withCString { head.problem(version: $0) }?.status
        }
        #expect(status("HTTP/1.1", [("Host", "a")]) == nil)
        #expect(status("HTTP/1.0", []) == nil)
        #expect(status("HTTP/1.0", [("Host", "a"), ("host", "b")]) == 400)
        #expect(status("HTTP/1.1", [("Host", "a"), ("Transfer-Encoding", "gzip, chunked")]) == 501)
        #expect(status("HTTP/1.1", [("Host", "a"), ("Transfer-Encoding", "chunked, gzip")]) == 400)
        #expect(status("HTTP/1.1", [("Host", "a"), ("Transfer-Encoding", "Chunked")]) == nil)
        #expect(status("HTTP/1.1", [("Host", "a"), ("Transfer-Encoding", "chun\u{212A}ed")]) == 501)
        #expect(status("HTTP/1.1", [("Host", "a"), ("X\tY", "z")]) == 400)
        #expect(status("HTTP/1.1", [("Host", "a\rb")]) == 400)
        #expect(status("HTTP/1.1", [("", "b"), ("Host", "a")]) == 400)
    }
}
