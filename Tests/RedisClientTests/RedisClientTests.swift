import Foundation
import HTTPTestClient
import Testing

@testable import RedisClient

/// The client against a real redis-server: binary values, replies of each
/// kind, Redis stopped and back, Redis frozen, Redis never there.
@Suite(.serialized, .enabled(if: OwnRedis.available)) struct RedisClientTests {
    @Test func binaryValuesAndEveryKindOfReply() async throws {
        let redis = try OwnRedis()
        let client = RedisClient(try RedisLocation(redis.url), connections: 2)
        defer { client.close() }
        let bytes: [UInt8] = [0, 255, 13, 10, 0, 37, 115]  // NULs, CRLF and a %s: all kept as they are
        #expect(try await client.run([Array("SET".utf8), Array("k".utf8), bytes]) == .status("OK"))
        #expect(try await client.run("GET", "k").bytes == bytes)
        #expect(try await client.run("GET", "missing") == .null)
        #expect(try await client.run("INCR", "n").integer == 1)
        #expect(try await client.run("MGET", "k", "missing") == .array([.bytes(bytes), .null]))
        await #expect(throws: RedisError.self) { try await client.run("NOSUCHCOMMAND") }
        // An error reply is Redis answering: it stays up.
        #expect(client.status.up)
        #expect(client.status.errors == 1)
    }

    @Test func stoppedRedisFailsFastThenComesBack() async throws {
        let redis = try OwnRedis()
        let client = RedisClient(try RedisLocation(redis.url), connections: 2, timeout: .milliseconds(200))
        // A client that waits a minute before its first probe: the fast failures in between, whatever the machine's pace.
        let patient = RedisClient(try RedisLocation(redis.url), connections: 1, timeout: .milliseconds(200), firstBackOff: .seconds(60))
        defer {
            client.close()
            patient.close()
        }
        #expect(try await client.run("SET", "a", "1") == .status("OK"))
        #expect(try await patient.run("GET", "a") == .bytes(Array("1".utf8)))
        redis.stop()
        // The first command finds the broken connection; after it Redis is down.
        await #expect(throws: RedisError.self) { try await client.run("GET", "a") }
        #expect(!client.status.up)
        await #expect(throws: RedisError.self) { try await patient.run("GET", "a") }
        await #expect(throws: RedisError.down) { try await patient.run("GET", "a") }
        try redis.start()
        // A probe per back-off: within a few seconds one gets through.
        var answered = false
        for _ in 0..<100 where !answered {
            answered = (try? await client.run("PING")) == .status("PONG")
            if !answered { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(answered)
        #expect(client.status.up)
    }

    /// Redis restarted while every thread kept a connection to it: each old
    /// connection fails on its next command, which goes again on a new one.
    /// No command fails and Redis is never called down (each thread's old
    /// connection used to call it down again, for a back-off, after it came back).
    @Test func aRestartUnderKeptConnectionsFailsNoCommand() async throws {
        let redis = try OwnRedis()
        let client = RedisClient(try RedisLocation(redis.url), connections: 4, timeout: .milliseconds(500))
        defer { client.close() }
        // Every thread makes its connection: more commands at once than threads, each held a moment.
        try await withThrowingTaskGroup(of: RedisValue.self) { group in
            for _ in 0..<16 { group.addTask { try await client.run("EVAL", "local t = redis.call('TIME') return 1", "0") } }
            for try await answer in group { #expect(answer == .integer(1)) }
        }
        redis.stop()
        try redis.start()
        let answers = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<16 { group.addTask { try await client.run("SET", "k\(index)", "v") == .status("OK") } }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(answers == Array(repeating: true, count: 16))
        #expect(client.status.up)
        #expect(client.status.errors == 0)
    }

    /// More commands at once than the pool can send in its timeout: the
    /// surplus is answered `.busy` at once, while Redis is up and answers every
    /// command it is given (no error). A shared tier that read `.busy` as
    /// "Redis cannot be asked" made thumbnails without a claim under load.
    @Test func aFloodIsAnsweredBusyWithRedisUpAndNoError() async throws {
        let redis = try OwnRedis()
        let client = RedisClient(try RedisLocation(redis.url), connections: 1, timeout: .milliseconds(100))
        defer { client.close() }
        let outcomes = await withTaskGroup(of: RedisError?.self) { group in
            for _ in 0..<400 {
                group.addTask {
                    do throws(RedisError) {
                        _ = try await client.run("PING")
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            return await group.reduce(into: [RedisError?]()) { $0.append($1) }
        }
        let busy = outcomes.filter { $0 == .busy }.count
        #expect(busy > 0)
        #expect(outcomes.allSatisfy { $0 == nil || $0 == .busy })
        #expect(client.status.up && client.status.errors == 0)
        #expect(client.status.busy == busy)
    }

    /// A flood that answers most commands busy: a command sent ahead of it, from a
    /// thread that waits for its reply (as claims are renewed), goes first and is answered.
    @Test func aCommandSentAheadOfAFloodIsAnswered() async throws {
        let redis = try OwnRedis()
        let client = RedisClient(try RedisLocation(redis.url), connections: 1, timeout: .milliseconds(100))
        defer { client.close() }
        let answers = await withTaskGroup(of: RedisValue?.self) { group in
            for _ in 0..<400 { group.addTask { try? await client.run("PING") } }
            // Among the flood, from threads of their own: ten commands ahead of it.
            for index in 0..<10 {
                group.addTask {
                    await withCheckedContinuation { (done: CheckedContinuation<RedisValue?, Never>) in
                        Thread {
                            done.resume(returning: try? client.runWaiting([Array("INCR".utf8), Array("ahead-\(index % 2)".utf8)], ahead: true))
                        }.start()
                    }
                }
            }
            return await group.reduce(into: [RedisValue?]()) { $0.append($1) }
        }
        #expect(client.status.busy > 0, "the flood was answered busy in part, or this test proves nothing")
        #expect(answers.filter { $0 == nil }.count == client.status.busy, "only the flood's commands were refused")
        #expect(try await client.run("GET", "ahead-0").bytes == Array("5".utf8))
        #expect(try await client.run("GET", "ahead-1").bytes == Array("5".utf8))
    }

    @Test func aFrozenRedisIsBoundedByTheTimeout() async throws {
        let redis = try OwnRedis()
        let client = RedisClient(try RedisLocation(redis.url), connections: 1, timeout: .milliseconds(200))
        defer { client.close() }
        #expect(try await client.run("PING") == .status("PONG"))
        try redis.freeze(seconds: 2)
        // The command gives up (a timeout on the wire), rather than waiting the 2 s out.
        await #expect(throws: RedisError.self) { try await client.run("GET", "a") }
        #expect(!client.status.up)
    }

    @Test func aRedisThatIsNotThereIsAnErrorNotAHang() async throws {
        let port = try FaultyOrigin.RefusingPort()
        let client = RedisClient(try RedisLocation("redis://127.0.0.1:\(port.port)/0"), connections: 1, timeout: .milliseconds(200), firstBackOff: .seconds(60))
        defer { client.close() }
        await #expect(throws: RedisError.self) { try await client.run("PING") }
        await #expect(throws: RedisError.down) { try await client.run("PING") }
        #expect(client.status.lastError?.contains("127.0.0.1:\(port.port)") == true)
    }
}
