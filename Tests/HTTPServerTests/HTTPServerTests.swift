import Foundation
import HTTPTestClient
import Synchronization
import Testing

@testable import HTTPServer

/// Starts a real server on port 0 for the body of a test, then shuts it down.
func withServer<T>(
    _ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
    router build: (inout Router) -> Void,
    _ body: (HTTPServer) async throws -> T
) async throws -> T {
    var configuration = HTTPServerConfiguration()
    configuration.port = 0
    configure(&configuration)
    var router = Router()
    build(&router)
    let routes = router
    let server = HTTPServer(configuration: configuration) { routes.reply(to: $0) }
    try server.start()
    #expect(server.port > 0)
    do {
        let result = try await body(server)
        await server.shutdown()
        return result
    } catch {
        await server.shutdown()
        throw error
    }
}

/// Counts arrivals and lets everyone through once `expected` have arrived.
actor Barrier {
    let expected: Int
    var arrived = 0
    var waiters: [CheckedContinuation<Void, Never>] = []
    init(expected: Int) { self.expected = expected }

    func arriveAndWait() async {
        arrived += 1
        if arrived >= expected {
            for waiter in waiters { waiter.resume() }
            waiters = []
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }
}

@Suite struct HTTPServerTests {
    @Test func keepsTheConnectionAliveAcrossRequests() async throws {
        try await withServer(router: { $0.get("/hello") { _ in .now(.plain(200, "hello")) } }) { server in
            let connection = try TestConnection(port: server.port)
            for _ in 0..<5 {
                try connection.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
                let response = try connection.readResponse()
                #expect(response.status == 200)
                #expect(response.text == "hello\n")
                #expect(response.header("Connection")?.lowercased() != "close")
            }
        }
    }

    @Test func asyncHandlersDoNotHoldServerThreads() async throws {
        // 24 requests must all be inside their handlers at once on a 2-thread
        // server: only possible if a waiting handler holds no server thread.
        let barrier = Barrier(expected: 24)
        try await withServer(
            { $0.threads = 2 },
            router: { router in
                router.get("/wait") { _ in
                    .later {
                        await barrier.arriveAndWait()
                        return .plain(200, "released")
                    }
                }
            }
        ) { server in
            let port = server.port
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<24 {
                    group.addTask { try await onThread { try TestHTTP.get(port: port, "/wait").status } }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 24))
        }
    }

    @Test func answersHeadWithoutABody() async throws {
        try await withServer(router: { $0.get("/x") { _ in .now(.plain(200, "body")) } }) { server in
            let response = try TestHTTP.request(port: server.port, "HEAD", "/x")
            #expect(response.status == 200)
            #expect(response.header("Content-Length") == "5")
            #expect(response.body.isEmpty)
        }
    }

    @Test func refusesWrongMethodsWithAllow() async throws {
        try await withServer(router: { $0.get("/x") { _ in .now(.plain(200, "x")) } }) { server in
            for method in ["POST", "PUT", "DELETE", "PATCH"] {
                let response = try TestHTTP.request(port: server.port, method, "/x", body: method == "DELETE" ? nil : "a=1")
                #expect(response.status == 405)
                #expect(response.header("Allow") == "GET, HEAD")
            }
            #expect(try TestHTTP.get(port: server.port, "/nothing").status == 404)
        }
    }

    @Test func refusesAHugeTargetAndTooManyHeaders() async throws {
        try await withServer(router: { $0.get("/") { _ in .now(.plain(200, "ok")) } }) { server in
            let long = try TestHTTP.get(port: server.port, "/?q=" + String(repeating: "a", count: 16 * 1024))
            #expect(long.status == 414)
            let many = (0..<200).map { ("X-Header-\($0)", "v") }
            let crowded = try TestHTTP.get(port: server.port, "/", headers: many)
            #expect(crowded.status == 431)
            #expect(try TestHTTP.get(port: server.port, "/").status == 200)
        }
    }

    @Test func refusesAnOversizedBody() async throws {
        try await withServer({ $0.maxBodyBytes = 1000 }, router: { $0.get("/") { _ in .now(.plain(200, "ok")) } }) { server in
            let response = try TestHTTP.request(port: server.port, "POST", "/", body: String(repeating: "b", count: 5000))
            #expect(response.status == 413)
            #expect(try TestHTTP.get(port: server.port, "/").status == 200)
        }
    }

    @Test func survivesAThousandSilentConnections() async throws {
        try await withServer(router: { $0.get("/") { _ in .now(.plain(200, "ok")) } }) { server in
            let silent = try (0..<1000).map { _ in try TestConnection(port: server.port, timeout: 60) }
            // A real client is still served while they sit there…
            #expect(try TestHTTP.get(port: server.port, "/").status == 200)
            // …and the silent connections are real connections the server still talks to.
            for connection in [silent[0], silent[499], silent[999]] {
                try connection.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(try connection.readResponse().status == 200)
            }
            withExtendedLifetime(silent) {}
        }
    }

    @Test func closesIdleConnectionsAfterTheTimeout() async throws {
        try await withServer({ $0.idleTimeout = 1 }, router: { $0.get("/") { _ in .now(.plain(200, "ok")) } }) { server in
            let idle = try TestConnection(port: server.port, timeout: 15)
            #expect(idle.waitForClose())
            let halfway = try TestConnection(port: server.port, timeout: 15)
            try halfway.send("GET / HTTP/1.1\r\nHost: x\r\n")  // headers never finished
            #expect(halfway.waitForClose())
        }
    }

    @Test func shutdownLetsRunningHandlersFinish() async throws {
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        let entered = Barrier(expected: 2)
        var router = Router()
        router.get("/slow") { _ in
            .later {
                await entered.arriveAndWait()
                try? await Task.sleep(for: .milliseconds(300))
                return .plain(200, "finished")
            }
        }
        let routes = router
        let server = HTTPServer(configuration: configuration) { routes.reply(to: $0) }
        try server.start()
        let port = server.port
        let inFlight = Task { try await onThread { try TestHTTP.get(port: port, "/slow") } }
        await entered.arriveAndWait()  // the request is inside its handler
        await server.shutdown()
        let response = try await inFlight.value
        #expect(response.status == 200)
        #expect(response.text == "finished\n")
        #expect(throws: TestConnection.Failure.self) { _ = try TestConnection(port: port) }
    }

    /// Work that waited and ends with a response built once (a thumbnail, a
    /// kept page) answers with it as it is, to every request, headers and all.
    @Test func workThatWaitedAnswersAPreparedResponseAsItIs() async throws {
        let prepared = PreparedResponse(Response(status: 201, headers: [HTTPField("X-Kept", "once")], body: ResponseBytes("kept bytes")))
        try await withServer(router: { router in
            router.get("/kept") { _ in
                .waiting {
                    try? await Task.sleep(for: .milliseconds(20)); return .prepared(prepared)
                }
            }
        }) { server in
            for _ in 0..<3 {
                let response = try await onThread { try TestHTTP.get(port: server.port, "/kept") }
                #expect(response.status == 201)
                #expect(response.header("X-Kept") == "once")
                #expect(response.text == "kept bytes")
            }
        }
    }
}

/// A server made before its handler (what watches it is made after it, and
/// the routes that show that after them) is given the handler before it starts.
@Suite struct HandlerGivenLaterTests {
    @Test func aServerMadeWithoutAHandlerRefusesToStartUntilGivenOneThenAnswersWithIt() async throws {
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        let server = HTTPServer(configuration: configuration)
        // Watched before it starts: no connections yet, and nothing to read them from.
        #expect(server.connections.held == 0)
        #expect(throws: HTTPServer.StartError.self) { try server.start() }
        var router = Router()
        router.get("/later") { _ in .now(.plain(200, "given later")) }
        let routes = router
        server.answer { routes.reply(to: $0) }
        try server.start()
        let port = server.port
        let response = try? await onThread { try TestHTTP.get(port: port, "/later") }
        await server.shutdown()
        #expect(response?.status == 200)
        #expect(response?.text == "given later\n")
        // Fixed once started: a handler cannot be swapped under the request path.
        #expect(throws: HTTPServer.StartError.self) { try server.start() }
    }
}
