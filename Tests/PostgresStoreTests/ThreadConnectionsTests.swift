import Foundation
import PostgresWire
import Testing
@testable import PostgresStore
@testable import WarmfeedCore

/// Deep pages read on each thread's own libpq connection (issue 23): a read
/// that waits past its deadline fails alone and the next is served; a
/// connection the server ended is made again once; a thread past the limit
/// reads on the store's reader threads; a server that never answers is given up on.
@Suite(.serialized) struct ThreadConnectionsTests {
    @Test func aDeepPageReadOnItsThreadGivesUpAtTheDeadlineAndTheNextIsServed() async throws {
        try await TestStore.with(.postgres) { made in
            try await upsert(made.store, (1...50).map { item($0, published: Int64($0)) })
            let location = try PostgresLocation(made.address)
            let store = try await PostgresFeedStore.open(location, queryTimeout: .milliseconds(300), logger: testLogger)
            let before = try await onThreadOfItsOwn { try store.preparedPageOnThisThread(.number(2), size: 10, tag: 7) }
            #expect(before??.rows.count == 10)
            // Another session holds the table: the read waits past its deadline, and gives up.
            let blocker = try storeConnection(location)
            try blocker.run("BEGIN")
            try blocker.run("LOCK TABLE item IN ACCESS EXCLUSIVE MODE")
            let blocked = try await onThreadOfItsOwn { () -> String in
                do {
                    _ = try store.preparedPageOnThisThread(.number(3), size: 10, tag: 7)
                    return "answered"
                } catch let error as StoreUnavailable {
                    return error.description
                }
            }
            #expect(blocked.contains("did not answer within"), "\(blocked)")
            #expect(store.status.answering == false)
            try blocker.run("COMMIT")
            blocker.close()
            // Slow is not gone: the next read is made on a new connection, and answered.
            let after = try await onThreadOfItsOwn { try store.preparedPageOnThisThread(.number(3), size: 10, tag: 7) }
            #expect(after??.rows.count == 10)
            #expect(after??.firstPosition == 21)
            #expect(store.status.answering)
            await store.close()
        }
    }

    @Test func aConnectionTheServerEndedIsMadeAgainOnceForTheNextRead() async throws {
        try await TestStore.with(.postgres) { made in
            try await upsert(made.store, (1...50).map { item($0, published: Int64($0)) })
            let store = try #require(made.store as? PostgresFeedStore)
            let location = try PostgresLocation(made.address)
            let (first, ended, second) = try await onThreadOfItsOwn { () -> (Int?, Int64?, Int?) in
                let first = try store.preparedPageOnThisThread(.number(1), size: 10, tag: 7)??.rows.count
                // The server ends this thread's session (as a restart, or an idle cut, would)...
                let other = try PQConnection(location.libpqParameters, deadline: .now + .seconds(30))
                let mine = "SELECT pid::int8 FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'warmfeed' AND pid <> pg_backend_pid()"
                let pid = try other.execute("mine", mine, [], until: .now + .seconds(30)).int64(0, 0)
                let ended = try other.execute("end", "SELECT count(pg_terminate_backend($1::int4))::int8", [pid ?? 0], until: .now + .seconds(30)).int64(0, 0)
                // ...and is seen to have ended it before the next read.
                for _ in 0..<300 {
                    let left = try other.execute("left", "SELECT count(*)::int8 FROM pg_stat_activity WHERE pid = $1::int4", [pid ?? 0], until: .now + .seconds(30)).int64(0, 0)
                    if left == 0 { break }
                    usleep(10_000)
                }
                other.close()
                let second = try store.preparedPageOnThisThread(.number(2), size: 10, tag: 7)??.rows.count
                return (first, ended, second)
            }
            #expect(first == 10)
            #expect(ended == 1)
            #expect(second == 10, "the read after the loss is answered on a new connection")
            #expect(store.threadConnections.remade == 1)
            #expect(store.status.answering)
        }
    }

    @Test func aThreadPastTheLimitGetsNilAndAClosedSetGivesNoConnection() async throws {
        try await TestStore.with(.postgres) { made in
            let connections = ThreadConnections(parameters: try PostgresLocation(made.address).libpqParameters, limit: 1)
            let one = "SELECT 1::int8"
            // The first thread holds the one connection while the second asks.
            let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
            async let first = onThreadOfItsOwn { () -> Int64? in
                let value = try connections.read(until: .now + .seconds(30)) { connection throws(PQProblem) in
                    try connection.execute("one", one, [], until: .now + .seconds(30)).int64(0, 0)
                }
                holding.signal()
                release.wait()
                return value ?? nil
            }
            await onThreadOfItsOwn { holding.wait() }
            let second = try await onThreadOfItsOwn {
                try connections.read(until: .now + .seconds(30)) { connection throws(PQProblem) in
                    try connection.execute("one", one, [], until: .now + .seconds(30)).int64(0, 0)
                }
            }
            release.signal()
            #expect(try await first == 1)
            #expect(second == nil, "past the limit: no connection, the caller reads another way")
            connections.close()
            let closed = try await onThreadOfItsOwn {
                try connections.read(until: .now + .seconds(30)) { _ throws(PQProblem) in 1 }
            }
            #expect(closed == nil)
        }
    }

    @Test func aServerThatNeverAnswersIsGivenUpOnAtTheDeadline() async throws {
        let (listener, port) = try silentListener()
        defer { close(listener) }
        let connections = ThreadConnections(
            parameters: [("host", "127.0.0.1"), ("port", "\(port)"), ("user", "u"), ("dbname", "db"), ("sslmode", "disable")], limit: 2)
        let problem = await refusal(connections, within: .milliseconds(300))
        #expect(problem?.timedOut == true, "\(String(describing: problem))")
        connections.close()
    }

    @Test func anAddressLibpqCannotUseFailsWithoutWaitingOutTheDeadline() async throws {
        // libpq refuses it before it makes a socket: there is nothing to wait on.
        let connections = ThreadConnections(parameters: [("hostaddr", "256.0.0.1"), ("user", "u"), ("dbname", "db")], limit: 2)
        let problem = await refusal(connections, within: .seconds(600))
        #expect(problem?.timedOut == false && problem?.description.contains("256.0.0.1") == true, "\(String(describing: problem))")
        connections.close()
    }
}

/// Why a read on a thread of its own could not be made within `limit` (nil when it was).
func refusal(_ connections: ThreadConnections, within limit: Duration) async -> PQProblem? {
    await onThreadOfItsOwn { () -> PQProblem? in
        do throws(PQProblem) {
            _ = try connections.read(until: .now + limit) { _ throws(PQProblem) in 1 }
            return nil
        } catch {
            return error
        }
    }
}

/// Runs `body` on a new thread: what it does on its thread's connection stays on that one connection.
func onThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

func onThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// A loopback port that accepts connections (the kernel's backlog) and never says a word.
func silentListener() throws -> (Int32, Int) {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    listen(listener, 16)
    var bound = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
    return (listener, Int(UInt16(bigEndian: bound.sin_port)))
}
