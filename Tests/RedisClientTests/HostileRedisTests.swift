import Foundation
import HTTPTestClient
import Testing

@testable import RedisClient

/// The client against something on Redis's port that is not a well-behaved
/// Redis: each command still ends (in an error, for the caller to carry on
/// without Redis), the process keeps its memory, and the connection that
/// misbehaved is dropped. No time is asserted: an answer that never ends
/// (a drip, silence) would hang a test whose client had no deadline.
@Suite struct HostileRedisTests {
    /// A client with one connection (so a thread held for ever shows as the
    /// next command never running) that tries again at once after a failure.
    static func client(_ redis: HostileRedis, password: String? = nil, limits: RedisReplyLimits = RedisReplyLimits()) throws -> RedisClient {
        RedisClient(
            try RedisLocation(redis.url(password: password)), connections: 1, timeout: .milliseconds(300), firstBackOff: .milliseconds(1), limits: limits)
    }

    /// Runs `words` until it gets past the client's back-off (`.down` while Redis is marked down).
    static func run(_ client: RedisClient, _ words: String...) async -> Result<RedisValue, RedisError> {
        for _ in 0..<500 {
            do throws(RedisError) {
                return .success(try await client.run(words.map { Array($0.utf8) }))
            } catch .down {
                try? await Task.sleep(for: .milliseconds(5))
            } catch {
                return .failure(error)
            }
        }
        return .failure(.down)
    }

    static let ok: HostileRedis.Answer = .send(Array("+OK\r\n".utf8))

    @Test func garbageIsAConnectionErrorAndTheNextConnectionWorks() async throws {
        let redis = try HostileRedis { _ in .send(Array("hello, I am not Redis\r\n".utf8)) }
        defer { redis.stop() }
        let client = try Self.client(redis)
        defer { client.close() }
        guard case .failure(.connection(let message)) = await Self.run(client, "GET", "k") else {
            Issue.record("garbage was not a connection error")
            return
        }
        #expect(message.lowercased().contains("protocol"), "\(message)")
        redis.answer { _ in Self.ok }
        #expect(try await Self.run(client, "PING").get() == .status("OK"))
        #expect(client.status.up)
    }

    @Test func aHugeBulkStringFailsTheCommandAndDropsTheConnection() async throws {
        // 64 MiB announced and sent as fast as the client reads: refused at 1 MiB.
        let redis = try HostileRedis { _ in .flood(head: HostileRedis.bulkHead(64 << 20), count: 64 << 20) }
        defer { redis.stop() }
        let client = try Self.client(redis)
        defer { client.close() }
        guard case .failure(.tooLarge) = await Self.run(client, "GET", "k") else {
            Issue.record("a 64 MiB reply was not refused")
            return
        }
        #expect(await Self.eventually { redis.droppedByClient == 1 }, "the client let the connection go mid-reply")
        redis.answer { _ in Self.ok }
        #expect(try await Self.run(client, "PING").get() == .status("OK"))
    }

    @Test(arguments: [
        // 2^31 - 1 elements announced: hiredis 0.14 would calloc 16 GiB of pointers for it.
        Array("*2147483647\r\n".utf8),
        // 1,000 small elements, far under the byte cap, over the count of values once they arrive.
        Array("*1000\r\n".utf8) + Array(repeating: Array(":1\r\n".utf8), count: 1000).flatMap { $0 },
        // Arrays in arrays, each announcing 1,000 elements.
        Array(repeating: Array("*1000\r\n".utf8), count: 8).flatMap { $0 },
    ])
    func aReplyOfTooManyValuesFailsTheCommand(reply: [UInt8]) async throws {
        let redis = try HostileRedis { _ in .send(reply) }
        defer { redis.stop() }
        let client = try Self.client(redis)
        defer { client.close() }
        guard case .failure(.tooLarge(let what)) = await Self.run(client, "MGET", "a", "b") else {
            Issue.record("\(reply.prefix(16)) was not refused")
            return
        }
        #expect(what.contains("values"))
        redis.answer { _ in Self.ok }
        #expect(try await Self.run(client, "PING").get() == .status("OK"))
    }

    /// A byte every 20 ms of a reply that never ends: each read gets something
    /// (a per-read timeout would never fire); the command's deadline does.
    @Test func aDripFeedEndsAtTheCommandsDeadline() async throws {
        let redis = try HostileRedis { _ in .drip(head: HostileRedis.bulkHead(1 << 19), interval: .milliseconds(20)) }
        defer { redis.stop() }
        let client = try Self.client(redis)
        defer { client.close() }
        guard case .failure(.timedOut) = await Self.run(client, "GET", "k") else {
            Issue.record("the drip did not end at the deadline")
            return
        }
        #expect(await Self.eventually { redis.droppedByClient == 1 }, "the client let the dripping connection go")
        // The client's one thread is free again.
        redis.answer { _ in Self.ok }
        #expect(try await Self.run(client, "PING").get() == .status("OK"))
    }

    /// Silence after the connection is made, from the AUTH on: the connect and
    /// its AUTH end at their deadline too.
    @Test func silenceAfterTheConnectEndsAtTheDeadline() async throws {
        let redis = try HostileRedis { _ in .silence }
        defer { redis.stop() }
        let client = try Self.client(redis, password: "secret")
        defer { client.close() }
        guard case .failure(.timedOut) = await Self.run(client, "PING") else {
            Issue.record("silence did not end at the deadline")
            return
        }
        #expect(redis.commands.first == ["AUTH", "secret"])
    }

    /// A reply at the limits is read whole: the caps refuse only past them.
    @Test func aReplyWithinTheLimitsIsRead() async throws {
        let value = [UInt8](repeating: 7, count: 200_000)
        let redis = try HostileRedis { _ in .send(HostileRedis.bulkHead(value.count) + value + Array("\r\n".utf8)) }
        defer { redis.stop() }
        let client = try Self.client(redis, limits: RedisReplyLimits(maxBytes: 200_100, maxObjects: 4))
        defer { client.close() }
        #expect(try await Self.run(client, "GET", "k").get() == .bytes(value))
    }

    static func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<200 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(25))
        }
        return condition()
    }
}
