import Foundation
import HTTPTestClient
import Synchronization
import Testing

@testable import HTTPServer

/// What the server keeps per worker thread (`WorkerShard`): many connections
/// on many threads at once, and the counts still add up.
@Suite struct WorkerShardTests {
    /// 48 keep-alive connections on a 4-thread server, 40 requests each, some
    /// answered on the server thread and some by an async handler: every
    /// request is answered, the server holds exactly the open connections
    /// and none in flight afterwards, nothing was shed, and none is held
    /// once the clients closed theirs.
    @Test func manyConnectionsOnManyThreadsAddUp() async throws {
        try await withServer(
            { $0.threads = 4 },
            router: { router in
                router.get("/now") { _ in .now(.plain(200, "now")) }
                router.get("/later") { _ in .later { .plain(200, "later") } }
            }
        ) { server in
            let port = server.port
            var results = try await withThrowingTaskGroup(of: (TestConnection, Int).self) { group in
                for index in 0..<48 {
                    group.addTask {
                        try await onThread {
                            let connection = try TestConnection(port: port)
                            var answered = 0
                            for step in 0..<40 {
                                let path = (index + step) % 3 == 0 ? "/later" : "/now"
                                try connection.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
                                let response = try connection.readResponse()
                                if response.status == 200, response.text == "\(path.dropFirst())\n" { answered += 1 }
                            }
                            return (connection, answered)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.reduce(0) { $0 + $1.1 } == 48 * 40)
            #expect(server.connections.held == 48)
            // A request ends when libmicrohttpd's completion callback runs, which may come
            // just after the client read the last byte of its answer.
            for _ in 0..<250 where server.core?.requestsInFlight ?? 0 > 0 { try await Task.sleep(for: .milliseconds(20)) }
            #expect(server.core?.requestsInFlight == 0)
            let counts = server.connections
            #expect(counts.madeRoom == 0 && counts.refused == 0 && counts.slowHeads == 0 && counts.malformed == 0)
            // Closed by the clients: each worker hears of its own, and the total goes back to none.
            // (Not the head timeout's idle close, which would also get there, 10 s on.)
            results.removeAll()
            for _ in 0..<250 where server.connections.held > 0 { try await Task.sleep(for: .milliseconds(20)) }
            #expect(server.connections.held == 0)
            #expect(server.connections.idleClosed == 0)
        }
    }
}
