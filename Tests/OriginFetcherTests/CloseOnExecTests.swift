import Foundation
import HTTPTestClient
import Testing
@testable import OriginFetcher

/// A process started while a fetch is open must not inherit its connection:
/// it would hold the connection open after the fetcher hung up, and the
/// origin would never see the hang-up (the fault tests saw this in CI, where
/// other tests start processes all the while).
@Suite struct CloseOnExecTests {
    @Test func theFetchersSocketsAreNotInheritedByChildProcesses() async throws {
        try await withOrigin { origin, fetcher in
            origin.script("/slow", .delay(.seconds(30), then: .respond(body: [1])))
            let patient = FetchLimits(connectTimeout: .seconds(120), totalTimeout: .seconds(120), lowSpeedLimit: 0)
            let task = Task { await fetcher.result(origin.url("/slow"), limits: patient) }
            #expect(await origin.eventually { $0.requests(to: "/slow") == 1 })
            let port = try #require(URLComponents(string: origin.url("/slow"))?.port)
            let flags = socketsConnected(toPort: port).map { fcntl($0, F_GETFD) }
            task.cancel()
            _ = await task.value
            #expect(flags.count == 1, "one connection to the origin: \(flags)")
            #expect(flags.allSatisfy { $0 >= 0 && $0 & FD_CLOEXEC != 0 }, "close-on-exec on the fetcher's socket: \(flags)")
        }
    }
}

/// This process's descriptors of TCP sockets whose peer is 127.0.0.1:`port`.
func socketsConnected(toPort port: Int) -> [Int32] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return names.compactMap(Int32.init).filter { descriptor in
        var peer = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &peer) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
        }
        return named == 0 && peer.sin_family == sa_family_t(AF_INET)
            && UInt16(bigEndian: peer.sin_port) == UInt16(port) && peer.sin_addr.s_addr == inet_addr("127.0.0.1")
    }
}
