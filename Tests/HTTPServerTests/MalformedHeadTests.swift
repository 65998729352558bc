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
        // libmicrohttpd 0.9.75 closes these three without a word, or waits
        // (it takes a NUL-led line for an empty one); the server looks first.
        ("a request line of one word", "GET\r\n\r\n", 400),
        ("a request line split by tabs", "GET\t/\tHTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("100 NULs and a blank line", String(repeating: "\0", count: 100) + "\r\n\r\n", 400),
        ("a request line that begins with a space", " GET / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("a TLS hello on the plain port", "\u{16}\u{03}\u{01}\u{00}\u{05}hello", 400),
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

    /// A NUL or a bare CR put at every place in a well-formed head, one at a
    /// time: each head gets one clear 4xx or 501 and then the connection
    /// closes; never a 200, a 5xx, a silent close, a wait, or a second header block.
    @Test(arguments: [UInt8(0), 0x0d])
    func aStrayByteAnywhereInTheHeadIsRefused(stray: UInt8) async throws {
        let head = Array("GET /?page=2 HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n".utf8)
        try await withServer(router: { $0.get("/") { _ in .now(.plain(200, "ok")) } }) { server in
            let port = server.port
            let answers = try await onThread { () throws -> [(Int, String)] in
                try (0..<head.count - 1).map { place in
                    var bytes = head
                    bytes.insert(stray, at: place)
                    let connection = try TestConnection(port: port, timeout: 5)
                    try connection.send(bytes)
                    let text = connection.readUntilClose().map { String(decoding: $0, as: UTF8.self) } ?? "(no close within 5 s)"
                    return (place, text)
                }
            }
            for (place, text) in answers {
                let statusLines = text.components(separatedBy: "\r\n").filter { $0.hasPrefix("HTTP/1.") }
                let status = statusLines.first.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
                let where_ = "byte \(stray) at \(place): \(String(text.prefix(80)).debugDescription)"
                #expect((400..<500).contains(status) || status == 501, "\(where_)")
                #expect(statusLines.count == 1, "\(where_)")
            }
        }
    }

    /// The heads libmicrohttpd 0.9.75 answers with its error's header block
    /// twice (a client reads the second as the body): the server answers them
    /// itself, once, with the status RFC 9110 and 9112 give.
    static let garbledByLibmicrohttpd: [(String, String, Int)] = [
        ("a negative Content-Length", "Content-Length: -1", 400),
        ("an alphabetic Content-Length", "Content-Length: abc", 400),
        ("a Content-Length with a plus", "Content-Length: +5", 400),
        ("a hexadecimal Content-Length", "Content-Length: 0x10", 400),
        ("a list of Content-Lengths", "Content-Length: 5, 5", 400),
        ("two Content-Length lines", "Content-Length: 5\r\nContent-Length: 5", 400),
        ("an empty Content-Length", "Content-Length: ", 400),
        ("a Content-Length with an inner space", "Content-Length: 1 0", 400),
        ("an overflowing Content-Length", "Content-Length: 99999999999999999999999", 413),
        ("a 16 KB cookie", "Cookie: a=" + String(repeating: "x", count: 16 * 1024), 431),
        ("a 30 KB cookie", "Cookie: a=" + String(repeating: "x", count: 30 * 1024), 431),
        ("a cookie of 2,000 pairs", "Cookie: " + (0..<2000).map { "k\($0)=v" }.joined(separator: "; "), 431),
        ("8 KB of cookies in a 20 KB head", "X-Big: " + String(repeating: "o", count: 12 * 1024) + "\r\nCookie: " + (0..<100).map { "k\($0)=" + String(repeating: "v", count: 75) }.joined(separator: "; "), 431),
    ]

    @Test(arguments: garbledByLibmicrohttpd.indices)
    func aHeadLibmicrohttpdWouldGarbleIsAnsweredOnce(index: Int) async throws {
        let (name, field, status) = Self.garbledByLibmicrohttpd[index]
        try await withServer(router: { $0.get("/") { _ in .now(.plain(200, "ok")) } }) { server in
            let port = server.port
            let text = try await onThread { () throws -> String in
                let connection = try TestConnection(port: port, timeout: 5)
                try connection.send("GET / HTTP/1.1\r\nHost: a\r\n\(field)\r\n\r\n")
                return connection.readUntilClose().map { String(decoding: $0, as: UTF8.self) } ?? "(no close within 5 s)"
            }
            let statusLines = text.components(separatedBy: "\r\n").filter { $0.hasPrefix("HTTP/1.") }
            #expect(statusLines.count == 1, "\(name): \(text.prefix(300).debugDescription)")
            #expect(statusLines.first?.hasPrefix("HTTP/1.1 \(status) ") == true, "\(name): \(statusLines)")
            #expect(server.connections.malformed == 1, "\(name)")
        }
    }

    /// A body longer than any route takes is refused before a byte of it is
    /// read, on a new connection or a kept one: one 413, then the close.
    @Test func a20MBBodyIsRefusedAtOnceWithOne413() async throws {
        try await withServer(router: { $0.get("/") { _ in .now(.plain(200, "ok")) } }) { server in
            let port = server.port
            for keptAlive in [false, true] {
                let text = try await onThread { () throws -> String in
                    let connection = try TestConnection(port: port, timeout: 5)
                    if keptAlive {
                        try connection.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
                        _ = try connection.readResponse()
                    }
                    try connection.send("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 20000000\r\n\r\n")
                    // The body starts coming; the answer does not wait for it.
                    try? connection.send([UInt8](repeating: 0x61, count: 256 * 1024))
                    return connection.readUntilClose().map { String(decoding: $0, as: UTF8.self) } ?? "(no close within 5 s)"
                }
                let statusLines = text.components(separatedBy: "\r\n").filter { $0.hasPrefix("HTTP/1.") }
                #expect(statusLines == ["HTTP/1.1 413 Content Too Large"] || statusLines == ["HTTP/1.1 413 Payload Too Large"],
                        "kept alive: \(keptAlive): \(text.prefix(300).debugDescription)")
            }
        }
    }

    /// A head is judged on what has arrived; one empty line before it is
    /// allowed (RFC 9112 §2.2), and what follows its empty line is not looked at.
    @Test func theFirstLookOnItsOwn() {
        func look(_ text: String) -> FirstLook {
            Array(text.utf8).withUnsafeBytes { FirstLook($0) }
        }
        for text in ["GET / HTTP/1.1\r\n", "\r\nGET / HTTP/1.1\r\n", "\n\nHEAD /", "M-SEARCH * HTTP/1.1", "GET ",
                     "", "G", "GET", "\r\n", "\r", "\r\nGE", "GET / HTTP/1.1\r", "GET / HTTP/1.1\nHost: a\n\n\0\r",
                     "GET / HTTP/1.1\r\nHost: a\r\n\r\nbody\0with\rbytes", "GET /\u{E9} HTTP/1.1\r\n"] {
            #expect(look(text) == .fine, "\(text.debugDescription)")
        }
        for text in ["GET\r\n", "GET\n", "GET\t/", "\0GET / HTTP/1.1", " GET /", "\rGET /", "GET\0 /",
                     "GET/index.html HTTP/1.1", "\u{16}\u{03}\u{01}", "G\u{E9}T / HTTP/1.1",
                     "GET / HTTP/1.1\r\nHost: a\0b\r\n\r\n", "GET / HTTP/1.1\r\nHost: a\rb\r\n", "GET /\0 HTTP/1.1",
                     "GET / HTTP/1.1\r\nX: 1\r\n\0\r\n\r\n"] {
            #expect(look(text) == .malformed, "\(text.debugDescription)")
        }
        // Content-Length: one number of digits, once; judged when its line ends.
        for text in ["GET / HTTP/1.1\r\nContent-Length: 5\r\n", "GET / HTTP/1.1\r\ncontent-length:  007 \r\n\r\n",
                     "GET / HTTP/1.1\r\nContent-Length: 12", "GET / HTTP/1.1\r\nContent-Length:", "GET / HTTP/1.1\r\nX-Content-Length: abc\r\n",
                     "GET /?Content-Length:abc HTTP/1.1\r\n", "GET / HTTP/1.1\r\nCookie: a=1; b=2\r\n\r\n"] {
            #expect(look(text) == .fine, "\(text.debugDescription)")
        }
        for text in ["GET / HTTP/1.1\r\nContent-Length: abc\r\n", "GET / HTTP/1.1\r\nContent-Length: 1 0\r\n",
                     "GET / HTTP/1.1\r\nContent-Length:\r\n", "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-length: 1\r\n",
                     "GET / HTTP/1.1\r\nContent-Length: -"] {
            #expect(look(text).answer?.status == 400, "\(text.debugDescription)")
        }
        #expect(look("GET / HTTP/1.1\r\nContent-Length: 1234567890123456789").answer?.status == 413)
        #expect(look("GET / HTTP/1.1\r\nCookie: " + String(repeating: "x", count: 8193)).answer?.status == 431)
        #expect(look("GET / HTTP/1.1\r\nCookie: " + String(repeating: "a=1;", count: 100)).answer?.status == 431)
        #expect(look("GET / HTTP/1.1\r\nCookie: " + String(repeating: "a=1;", count: 99)) == .fine)
    }

    /// The server looks at a new connection's first bytes only: what follows
    /// on the same connection is still read whole by libmicrohttpd.
    @Test func aGoodFirstRequestKeepsItsConnection() async throws {
        try await withServer(router: { $0.get("/") { _ in .now(.plain(200, "ok")) } }) { server in
            let port = server.port
            let statuses = try await onThread { () throws -> [Int] in
                let connection = try TestConnection(port: port, timeout: 5)
                try connection.send("\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n")
                let first = try connection.readResponse().status
                try connection.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
                return [first, try connection.readResponse().status]
            }
            #expect(statuses == [200, 200])
            #expect(server.connections.malformed == 0)
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
