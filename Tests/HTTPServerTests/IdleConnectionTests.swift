import Foundation
import HTTPTestClient
import Testing
@testable import HTTPServer

/// The head timeout against real sockets: an idle keep-alive connection is
/// closed without a word (RFC 9112 §9.5: a client that reuses it must not
/// find a stale answer there), while a head that began and stalled gets 408.
@Suite struct IdleConnectionTests {
    static func hello(_ router: inout Router) {
        router.get("/hello") { _ in .now(.plain(200, "hello")) }
    }

    @Test func anIdleKeepAliveConnectionIsClosedWithoutAByte() async throws {
        try await withServer({ $0.headTimeout = 1 }, router: Self.hello) { server in
            let port = server.port
            try await onThread {
                let connection = try TestConnection(port: port, timeout: 10)
                try connection.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(try connection.readResponse().status == 200)
                // Idle past the head timeout: the server closes, and sends nothing first.
                let after = connection.readUntilClose()
                #expect(after == [], "an idle connection got \(String(decoding: after ?? [], as: UTF8.self))")
            }
            #expect(server.connections.idleClosed >= 1)
            #expect(server.connections.slowHeads == 0)
        }
    }

    @Test func aNewConnectionThatNeverSpeaksIsClosedWithoutAByte() async throws {
        try await withServer({ $0.headTimeout = 1 }, router: Self.hello) { server in
            let port = server.port
            let after = try await onThread { try TestConnection(port: port, timeout: 10).readUntilClose() }
            #expect(after == [])
            #expect(server.connections.slowHeads == 0)
        }
    }

    @Test(arguments: [
        "GET /hel",  // the request line itself stalls
        "GET /hello HTTP/1.1\r\nHost: x\r\nAccept",  // a header line stalls
    ])
    func aHeadThatBeganAndStalledGets408(_ part: String) async throws {
        try await withServer({ $0.headTimeout = 1 }, router: Self.hello) { server in
            let port = server.port
            // On a new connection, and on a kept-alive one after a first answer.
            for keptAlive in [false, true] {
                let after = try await onThread { () -> [UInt8]? in
                    let connection = try TestConnection(port: port, timeout: 10)
                    if keptAlive {
                        try connection.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
                        _ = try connection.readResponse()
                        // Half the timeout idle first: the wait counts from the answer, the bytes after it.
                        Thread.sleep(forTimeInterval: 0.5)
                    }
                    try connection.send(part)
                    return connection.readUntilClose()
                }
                let text = String(decoding: after ?? [], as: UTF8.self)
                #expect(text.hasPrefix("HTTP/1.1 408 "), "kept alive: \(keptAlive): \(text)")
                #expect(text.components(separatedBy: "HTTP/1.1 ").count == 2, "one status line: \(text)")
            }
            #expect(server.connections.slowHeads == 2)
        }
    }
}
