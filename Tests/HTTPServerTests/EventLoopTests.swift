import Glibc
import HTTPTestClient
import Synchronization
import Testing

@_spi(Testing) @testable import HTTPServer

/// The server's own loop (`EventLoop`): its head reader on its own, then what
/// a client meets over loopback where libmicrohttpd used to stand: pipelined
/// and trickled heads, HTTP/1.0's keep-alive, `Expect: 100-continue`, HEAD and
/// 304 heads, an answer larger than the socket takes at once, waits answered
/// in order with more requests behind them.
@Suite struct EventLoopTests {
    /// Reads and judges `text` as a head found whole.
    private func parse(_ text: String, maxHeaderCount: Int = 100) -> Result<ParsedHead, HTTPProblem> {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBufferPointer { buffer in
            HeadParser.check(buffer.baseAddress!, length: buffer.count, maxHeaderCount: maxHeaderCount)
        }
    }

    private func end(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { HeadParser.end(of: $0.baseAddress!, count: $0.count, from: 0) }
    }

    @Test func aHeadEndsAtItsEmptyLineWithCRLFOrABareLF() {
        #expect(end("GET / HTTP/1.1\r\nHost: a\r\n\r\nNEXT") == 27)
        #expect(end("GET / HTTP/1.1\nHost: a\n\nNEXT") == 24)
        #expect(end("GET / HTTP/1.1\r\nHost: a\r\n\r") == nil)
        #expect(end("GET / HTTP/1.1\r\nHost: a\r\n") == nil)
    }

    @Test func theRequestLineAndTheLinesAreRead() throws {
        let head = try parse("GET /a?b=1 HTTP/1.1\r\nHost: x\r\nX-One:  spaced value \t\r\nConnection: Keep-Alive, Upgrade\r\n\r\n").get()
        #expect(head.method == "GET")
        #expect(head.target == "/a?b=1")
        #expect(head.version == .http11)
        #expect(!head.closes)
        let request = Request(method: .get, path: "/", query: [], fields: head.lines.fields, peer: 0, body: [])
        #expect(request.header(HTTPField.Name("X-One")!) == "spaced value")
        #expect(head.lines.head.problem(version: "HTTP/1.1") == nil)
    }

    @Test func http10ClosesUnlessItAsksToStayAndCloseIsHeardAmongOtherTokens() throws {
        #expect(try parse("GET / HTTP/1.0\r\n\r\n").get().closes)
        #expect(try !parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").get().closes)
        #expect(try parse("GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, close\r\n\r\n").get().closes)
        #expect(try parse("POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\n\r\n").get().expectsContinue)
    }

    @Test(arguments: [
        ("GET / HTTP/2.0\r\n\r\n", 505),
        ("GET / HTTPS/1.1\r\n\r\n", 400),
        ("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("GET / HTTP/1.1 \r\nHost: a\r\n\r\n", 400),
        ("G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nX: a\0b\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1234567890123456789\r\n\r\n", 413),
    ])
    func aBrokenLineIsRefused(head: String, status: Int) {
        guard case .failure(let problem) = parse(head) else {
            Issue.record("accepted: \(head.debugDescription)")
            return
        }
        #expect(problem.status == status, "\(head.debugDescription)")
    }

    private static func router(_ router: inout Router) {
        router.get("/") { _ in .now(.plain(200, "root")) }
        router.get("/big") { _ in .now(Response(status: 200, body: EventLoopTests.big)) }
        router.get("/later") { _ in
            .later {
                try? await Task.sleep(for: .milliseconds(100)); return .plain(200, "later")
            }
        }
        router.get("/same") { _ in .now(Response(status: 304, headers: [HTTPField(name: .eTag, value: "\"x\"")])) }
        router.post("/form") { request in .now(.plain(200, "got \(request.body.count)")) }
        router.get("/prepared") { _ in .prepared(EventLoopTests.prepared) }
    }

    /// One response built once, sent to every request for it.
    static let prepared = PreparedResponse(Response(status: 201, headers: [HTTPField("X-Kept", "once")], body: ResponseBytes("kept bytes")))

    /// Runs `body` on a thread of its own with a connection to a server of `router`'s routes.
    private func onConnection(
        _ configure: (inout HTTPServerConfiguration) -> Void = { _ in }, _ body: @escaping @Sendable (TestConnection) throws -> Void
    ) async throws {
        try await withServer(configure, router: Self.router) { server in
            let port = server.port
            try await onThread { try body(TestConnection(port: port, timeout: 10)) }
        }
    }

    /// 8 MB, more than a loopback socket takes at once: the answer goes out in pieces.
    static let big = ResponseBytes((0..<8_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })

    @Test func pipelinedRequestsInOneWriteAndTrickledOnesAreAnsweredInOrder() async throws {
        try await onConnection { connection in
            let one = "GET /later HTTP/1.1\r\nHost: a\r\n\r\n"
            let two = "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
            try connection.send(one + two + one + "\r\n" + two)
            #expect(try connection.readResponse().text == "later\n")
            #expect(try connection.readResponse().text == "root\n")
            #expect(try connection.readResponse().text == "later\n")
            #expect(try connection.readResponse().text == "root\n")
            for byte in two.utf8 { try connection.send([byte]) }
            #expect(try connection.readResponse().text == "root\n")
        }
    }

    /// More pipelined requests than the connection's buffer holds: the rest is read
    /// once answering has made room (no new edge comes for bytes already waiting).
    @Test func pipelinedRequestsPastTheBufferAreAllAnswered() async throws {
        // A 4 KiB buffer, so the 40 KB of requests surely wait in the socket past it.
        try await onConnection({ $0.connectionMemoryLimit = 4096 }) { connection in
            let count = 1_500
            try connection.send(String(repeating: "GET / HTTP/1.1\r\nHost: a\r\n\r\n", count: count))
            var answered = 0
            for _ in 0..<count where try connection.readResponse().text == "root\n" { answered += 1 }
            #expect(answered == count)
        }
    }

    @Test func anAnswerLargerThanTheSocketTakesArrivesWholeAndTheNextFollows() async throws {
        try await onConnection { connection in
            try connection.send("GET /big HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n")
            let big = try connection.readResponse()
            #expect(big.body.count == Self.big.count)
            #expect(big.body == Self.big.bytes)
            #expect(try connection.readResponse().text == "root\n")
        }
    }

    @Test func http10KeepAliveHeadAnd304AreAnsweredAsHTTPSays() async throws {
        try await onConnection { connection in
            try connection.send("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            let kept = try connection.readResponse()
            #expect(kept.header("Connection")?.lowercased() == "keep-alive")
            try connection.send("HEAD / HTTP/1.1\r\nHost: a\r\n\r\n")
            let head = try connection.readResponse(head: true)
            #expect(head.header("Content-Length") == "5")
            #expect(head.body.isEmpty)
            try connection.send("GET /same HTTP/1.1\r\nHost: a\r\n\r\n")
            let same = try connection.readResponse()
            #expect(same.status == 304)
            #expect(same.header("Content-Length") == nil)
            try connection.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(try connection.readResponse().text == "root\n")
            try connection.send("GET / HTTP/1.0\r\n\r\n")
            #expect(try connection.readResponse().header("Connection") == "close")
            #expect(connection.waitForClose())
        }
    }

    /// libmicrohttpd judged only a connection's first head this way (`FirstLook`); the loop judges every one.
    @Test func aLaterHeadOnAKeptConnectionIsJudgedAsTheFirst() async throws {
        try await withServer(router: Self.router) { server in
            let port = server.port
            try await onThread {
                for bad in ["POST /form HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\nhello", "GET /\0x HTTP/1.1\r\nHost: a\r\n\r\n", "GET\r\n\r\n"] {
                    let connection = try TestConnection(port: port, timeout: 10)
                    try connection.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
                    #expect(try connection.readResponse().text == "root\n")
                    try connection.send(bad)
                    #expect(try connection.readResponse().status == 400, "\(bad.debugDescription)")
                    #expect(connection.waitForClose())
                }
            }
        }
    }

    @Test func aClientThatExpects100ContinueGetsItThenItsAnswer() async throws {
        try await onConnection { connection in
            try connection.send("POST /form HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
            #expect(try connection.readResponse(head: true).status == 100)
            try connection.send("hello")
            #expect(try connection.readResponse().text == "got 5\n")
        }
    }

    /// Once the server stops accepting, the answer to a request it still serves on a kept
    /// connection is that connection's last, and says so (as nginx's does), so the client
    /// takes its next request elsewhere instead of finding the connection gone.
    @Test func anAnswerAfterTheServerStoppedAcceptingSaysItIsTheLast() async throws {
        let gate = Gate()
        let hold: @Sendable () async -> Response = {
            gate.held.store(true, ordering: .releasing)
            while !gate.released.load(ordering: .acquiring) { try? await Task.sleep(for: .milliseconds(5)) }
            return .plain(200, "held")
        }
        // No timeout or grace period may end a step first on a loaded machine (CI once
        // stalled every test for 20 s; the head timeout closed a connection made before it).
        let patient: (inout HTTPServerConfiguration) -> Void = { ($0.headTimeout, $0.idleTimeout, $0.shutdownGrace) = (120, 120, 120) }
        try await withServer(
            patient,
            router: {
                $0.get("/hold") { _ in .later(hold) }; Self.router(&$0)
            }
        ) { server in
            let port = server.port
            // Two kept connections, each answered once: one asks to be held, one stays idle.
            let (held, idle) = try await onThread {
                let (held, idle) = (try TestConnection(port: port, timeout: 60), try TestConnection(port: port, timeout: 60))
                for connection in [held, idle] {
                    try connection.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
                    #expect(try connection.readResponse().header("Connection") == nil)
                }
                try held.send("GET /hold HTTP/1.1\r\nHost: a\r\n\r\n")
                return (held, idle)
            }
            while !gate.held.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(5)) }
            let stopping = Task { await server.shutdown() }
            // The idle connection asks again until its answer says it is the last: the server
            // has stopped accepting then (up to 10 s).
            let last = try await onThread {
                for _ in 0..<2_000 {
                    try idle.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
                    if try idle.readResponse().header("Connection") == "close" { return true }
                    usleep(5_000)
                }
                return false
            }
            #expect(last, "no answer said close")
            gate.released.store(true, ordering: .releasing)
            let answer = try await onThread { try held.readResponse() }
            #expect(answer.text == "held\n")
            #expect(answer.header("Connection") == "close")
            #expect(try await onThread { held.waitForClose() && idle.waitForClose() })
            await stopping.value
        }
    }

    /// A response built once is sent whole, head and body, each time it is asked for.
    @Test func aPreparedResponseIsSentWholeEachTime() async throws {
        try await withServer(router: Self.router) { server in
            let port = server.port
            for _ in 0..<3 {
                let kept = try await onThread { try TestHTTP.get(port: port, "/prepared") }
                #expect(kept.status == 201 && kept.text == "kept bytes" && kept.header("X-Kept") == "once")
            }
        }
    }
}

/// A handler held until a test lets it go.
private final class Gate: Sendable {
    let held = Atomic<Bool>(false)
    let released = Atomic<Bool>(false)
}
