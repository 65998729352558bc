import Foundation
import Logging
import Reckoning
import RedisClient
import ServiceLifecycle
import Synchronization
import WarmfeedCore

/// The thumbnail tier a cluster shares, on Redis: between each node's memory
/// and its disk. What one node makes (or finds failed) is a hit on every
/// node; each original is fetched by one node, which owns it and makes its
/// other variants for the others (groupcache's owner, found through Redis
/// rather than a hash ring, so a node that joins or dies moves nothing).
///
/// Thumbnails are values behind a `T`, or `N` for a failure (a negative
/// entry, with the failure's time to live); Redis bounds itself (`maxmemory`
/// with `allkeys-lru`, deploy/redis.conf). An original's record is `U` and
/// its owner's address (a day), or `N` for its failure. A claim on fetching
/// an original is a key set with `SET … NX PX` holding this node's token,
/// renewed every second while the node works on it: a node that dies stops
/// renewing, and its claims expire within `claimTTL` for another node to take
/// over. Nodes that miss a claimed original poll (a few milliseconds apart,
/// backing off) until its owner or its failure appears, or the claim is gone.
///
/// Nothing read from Redis is believed further than this node can check:
/// whoever can write to it could otherwise make every node fetch any URL or
/// serve any bytes. A thumbnail must be a whole image of its format that fits
/// its box (`ThumbnailCheck`), or it is a miss and goes; an owner must be one
/// of the `peers` this node was given, or it is not asked (its record goes
/// and this node claims the original itself); a failure lives at most
/// `longestFailure`, a claim `claimTTL` and an owner record a day, and a
/// longer lifetime is cut to that in Redis too.
///
/// Every call is bounded by the client's timeout; when Redis cannot be
/// reached the tier misses, claims are `.unavailable`, and each node carries
/// on with its own tiers (as it would without `--redis`). A command the
/// client's own queue had no room for (`.busy`, this node being loaded) is
/// not Redis being away, nor is a stall of a moment: a claim waits and asks
/// again (for a second of an outage).
package final class SharedTier: SharedThumbnailTier, Service {
    private struct Counters {
        var hits = 0, misses = 0, failedHits = 0, writes = 0
        var claimsTakenOver = 0
        /// Owner records naming a node not among the peers (never asked), thumbnails
        /// that were not what their key says (dropped), lifetimes cut to their ceiling.
        var ownersRefused = 0, badValues = 0, lifetimesCapped = 0
        /// Claims asked again because this node's queue to Redis was full (not Redis's fault),
        /// and because Redis had stopped answering a moment before (see `claimOriginal`).
        var busyRetries = 0, outageRetries = 0
        var pagesClaimed = 0, pagesWarmedElsewhere = 0
        var latency = LatencyWindow(capacity: 1024)
        var keys: Int?
        var bytes: Int?
        var maxBytes: Int?
    }

    package let name = "shared"
    let client: RedisClient
    /// Names every key, so stores (epochs) that share one Redis never mix.
    private let prefix: String
    /// This process's claims hold this value: only the holder renews or deletes them.
    private let token: [UInt8]
    let claimTTL: Duration
    /// The longest a node waits on another's claim before making the thumbnail itself.
    let longestWait: Duration
    /// The originals whose claims this node holds (it renews them).
    private let held = Mutex<Set<Picture>>([])
    /// This node's address, as the others reach it: what an original's owner record names.
    let address: NodeAddress
    /// The nodes an owner record may name.
    let peers: KnownPeers
    /// The longest a failure read from Redis is believed (the longest negative TTL).
    let longestFailure: Duration
    private let counters = Mutex(Counters())
    private let logger: Logger

    package init(
        client: RedisClient, epoch: UInt32, node: String, address: NodeAddress, peers: KnownPeers, longestFailure: Duration,
        claimTTL: Duration = .seconds(5), longestWait: Duration = .seconds(20), logger: Logger
    ) {
        self.client = client
        self.address = address
        self.peers = peers
        self.longestFailure = longestFailure
        prefix = "wf:\(epoch):"
        token = Array("\(node):\(UUID().uuidString)".utf8)
        self.claimTTL = claimTTL
        self.longestWait = longestWait
        self.logger = logger
    }

    // MARK: Keys and scripts

    private func key(_ kind: String, _ key: ThumbnailKey) -> [UInt8] {
        Array("\(prefix)\(kind):\(key.picture.name):\(key.variant.name):\(key.variant.format.rawValue)".utf8)
    }

    private func key(_ kind: String, picture: Picture) -> [UInt8] {
        Array("\(prefix)\(kind):\(picture.name)".utf8)
    }

    private var claimMilliseconds: [UInt8] { Array(String(Self.milliseconds(claimTTL)).utf8) }
    private var failureMilliseconds: [UInt8] { Array(String(max(1, Self.milliseconds(longestFailure))).utf8) }
    private static let ownerMilliseconds = Array(String(ownerSeconds * 1000).utf8)

    /// Probes after the failure that called Redis down that a claim waits through before it fetches alone.
    static let probesAStallIsGiven = 2

    /// How long an owner record lives: about as long as an original stays on its owner's disk.
    static let ownerSeconds = 86_400

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.wholeMilliseconds)
    }

    private func eval(_ script: String, keys: [[UInt8]], arguments: [[UInt8]] = []) async throws(RedisError) -> RedisValue {
        try await client.run([Array("EVAL".utf8), Array(script.utf8), Array(String(keys.count).utf8)] + keys + arguments)
    }

    /// What a stored value says: a thumbnail (its bytes unchecked yet), a
    /// failure (at most `longestFailure` more), or nothing usable; and whether
    /// its lifetime was cut.
    private func decode(_ value: RedisValue) -> (TierRead, capped: Bool) {
        guard case .array(let parts) = value, (2...3).contains(parts.count), let bytes = parts[0].bytes, let first = bytes.first else {
            return (.miss, false)
        }
        let capped = parts.count == 3
        switch first {
        case UInt8(ascii: "T"): return (.hit(Array(bytes.dropFirst())), capped)
        case UInt8(ascii: "N"):
            let remaining = min(Double(parts[1].integer ?? 0) / 1000, Uptime.seconds(longestFailure))
            return (remaining > 0 ? .failed(remaining: remaining) : .miss, capped)
        default: return (.miss, capped)
        }
    }

    // MARK: ThumbnailTier

    package func read(_ key: ThumbnailKey) async -> TierRead {
        let start = ContinuousClock.now
        let name = self.key("t", key)
        guard let value = try? await eval(Self.look, keys: [name], arguments: [failureMilliseconds]) else { return .miss }
        let seconds = Uptime.seconds(ContinuousClock.now - start)
        var (answer, capped) = decode(value)
        if case .hit(let bytes) = answer, !ThumbnailCheck.holds(bytes, as: key.variant) {
            // Not a whole image of the key's format in its box: never served, and gone
            // from Redis (a value another node wrote meanwhile may go too: one more miss).
            answer = .miss
            counters.withLock { $0.badValues += 1 }
            logger.warning("the shared tier held a value that is not the thumbnail its key names: dropped", metadata: ["key": "\(key)"])
            _ = try? await client.run([Array("DEL".utf8), name])
        }
        counters.withLock {
            if capped { $0.lifetimesCapped += 1 }
            switch answer {
            case .hit:
                $0.hits += 1
                $0.latency.record(seconds)
            case .failed: $0.failedHits += 1
            case .miss: $0.misses += 1
            }
        }
        return answer
    }

    package func write(_ key: ThumbnailKey, _ bytes: [UInt8]) async {
        // A week at most: Redis's LRU bounds it long before, unless the cluster is idle.
        let value = [UInt8(ascii: "T")] + bytes
        if (try? await client.run([Array("SET".utf8), self.key("t", key), value, Array("EX".utf8), Array("604800".utf8)])) != nil {
            counters.withLock { $0.writes += 1 }
        }
    }

    // MARK: SharedThumbnailTier

    /// The owner record's value for this node.
    private var ownerRecord: [UInt8] { Array("U\(address.value)".utf8) }

    package func claimOriginal(_ picture: Picture) async -> OriginalClaim {
        let deadline = ContinuousClock.now + longestWait
        var pause = Duration.milliseconds(5)
        var waited = false
        // Renewed from the moment it is asked for, not from when the answer is read: on a
        // busy process the task that reads "won" can resume after the claim's whole TTL,
        // and a claim nobody renewed lapsed while its node fetched (the other node then won
        // it too, without having waited: the original fetched twice). The renewal extends
        // only a claim holding this node's token, so renewing one not won changes nothing.
        var won = false
        var forgotStranger = false
        held.withLock { _ = $0.insert(picture) }
        defer { if !won { held.withLock { _ = $0.remove(picture) } } }
        while true {
            let answer: RedisValue?
            do throws(RedisError) {
                answer = try await eval(
                    Self.claimOriginalScript, keys: [key("o", picture: picture), key("c", picture: picture)],
                    arguments: [token, claimMilliseconds, ownerRecord, failureMilliseconds, Self.ownerMilliseconds])
            } catch .busy {
                // This node's own queue to Redis was full: Redis is there, ask again shortly.
                counters.withLock { $0.busyRetries += 1 }
                answer = nil
            } catch .down, .timedOut, .connection {
                // Redis stopped answering: more often a stall than an outage until two probes failed (about
                // 1.25 s of silence, 0.75 s of refusals). Ask again, as the other nodes will, rather than fetch
                // what one may be fetching (a claim that timed out but was taken comes back won).
                guard client.failedTries <= Self.probesAStallIsGiven else { return .unavailable }
                counters.withLock { $0.outageRetries += 1 }
                answer = nil
            } catch {
                return .unavailable
            }
            switch answer {
            case .integer(1)?:
                won = true
                if waited { counters.withLock { $0.claimsTakenOver += 1 } }
                return .won
            case .integer?, nil:
                // Another node fetches it: wait for it to own it, its failure, or its claim to lapse.
                if answer == .integer(2) { counters.withLock { $0.lifetimesCapped += 1 } }
                waited = waited || answer != nil
                guard ContinuousClock.now + pause < deadline, !Task.isCancelled else { return .unavailable }
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .milliseconds(100))
            case let value?:
                guard case .array(let parts) = value, (2...3).contains(parts.count), let bytes = parts[0].bytes, let first = bytes.first else {
                    return .unavailable
                }
                if parts.count == 3 { counters.withLock { $0.lifetimesCapped += 1 } }
                switch first {
                case UInt8(ascii: "U"):
                    if let peer = peers.known(String(decoding: bytes.dropFirst(), as: UTF8.self)) { return .owner(peer) }
                    // Not a node this one was given: never asked. Its record goes (if it still
                    // says the same) and the claim is asked again; a stranger named again
                    // at once leaves this node to fetch the original without one.
                    counters.withLock { $0.ownersRefused += 1 }
                    logger.warning("an owner record names a node that is not a peer: not asked", metadata: ["picture": "\(picture.name)"])
                    guard !forgotStranger else { return .unavailable }
                    forgotStranger = true
                    _ = try? await eval(Self.forget, keys: [key("o", picture: picture)], arguments: [bytes])
                    continue
                case UInt8(ascii: "N"):
                    let remaining = min(Double(parts[1].integer ?? 0) / 1000, Uptime.seconds(longestFailure))
                    return remaining > 0 ? .failed(remaining: remaining) : .unavailable
                default: return .unavailable
                }
            }
        }
    }

    package func ownOriginal(_ picture: Picture) async {
        held.withLock { _ = $0.remove(picture) }
        _ = try? await eval(
            Self.own, keys: [key("o", picture: picture), key("c", picture: picture)],
            arguments: [token, ownerRecord, Array(String(Self.ownerSeconds).utf8)])
    }

    package func originalFailed(_ picture: Picture, seconds: Double) async {
        held.withLock { _ = $0.remove(picture) }
        let milliseconds = max(1, Int(seconds * 1000))
        _ = try? await eval(
            Self.failOriginal, keys: [key("o", picture: picture), key("c", picture: picture)], arguments: [token, Array(String(milliseconds).utf8)])
    }

    package func releaseOriginal(_ picture: Picture) async {
        held.withLock { _ = $0.remove(picture) }
        _ = try? await eval(Self.release, keys: [key("c", picture: picture)], arguments: [token])
    }

    package func forgetOwner(_ picture: Picture, url: String) async {
        _ = try? await eval(Self.forget, keys: [key("o", picture: picture)], arguments: [Array("U\(url)".utf8)])
    }

    package func rememberFailure(_ key: ThumbnailKey, seconds: Double) async {
        let milliseconds = max(1, Int(seconds * 1000))
        _ = try? await client.run([Array("SET".utf8), self.key("t", key), Array("N".utf8), Array("PX".utf8), Array(String(milliseconds).utf8)])
    }

    // MARK: Pre-warm

    /// Whether this node should warm the thumbnails of the page `page` (named
    /// by what it shows). The first node to ask warms it; a node asking while
    /// another warms it waits (bounded) until that node says it is done, so a
    /// page it serves next has its thumbnails in the shared tier; a node
    /// asking later is told it is warm. True whenever Redis cannot say.
    package func claimPage(_ page: String) async -> Bool {
        let key = Array("\(prefix)w:\(page)".utf8)
        let deadline = ContinuousClock.now + longestWait
        var pause = Duration.milliseconds(10)
        while true {
            // Warming: a short claim (a node that dies lets another take over); warm: ten minutes.
            guard let answer = try? await client.run([Array("SET".utf8), key, token, Array("NX".utf8), Array("PX".utf8), Array("10000".utf8)]) else {
                return true
            }
            if answer == .status("OK") {
                counters.withLock { $0.pagesClaimed += 1 }
                return true
            }
            guard let value = try? await client.run([Array("GET".utf8), key]) else { return true }
            if value == .bytes(Array("warm".utf8)) || ContinuousClock.now + pause >= deadline || Task.isCancelled {
                counters.withLock { $0.pagesWarmedElsewhere += 1 }
                return false
            }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(100))
        }
    }

    /// This node has warmed `page`: the other nodes need not, for ten minutes.
    package func pageWarmed(_ page: String) async {
        let key = Array("\(prefix)w:\(page)".utf8)
        _ = try? await client.run([Array("SET".utf8), key, Array("warm".utf8), Array("EX".utf8), Array("600".utf8)])
    }

    // MARK: Running

    /// Renews held claims every second, reads Redis's size every few seconds,
    /// and says in the log when Redis goes away and comes back.
    package func run() async throws {
        var wasUp: Bool?
        var tick = 0
        let renewing = Atomic(true)
        let renewer = Thread { [self] in renewClaims(while: renewing) }
        renewer.name = "claim-renewer"
        renewer.start()
        defer { renewing.store(false, ordering: .relaxed) }
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            if tick % 5 == 0 {
                await readSize()
            } else if !client.status.up {
                // Probe (once per back-off): a Redis that is back is used again within a second or so.
                _ = try? await client.run("PING")
            }
            let status = client.status
            if status.up != wasUp {
                if status.up {
                    if wasUp != nil { logger.notice("Redis answers again: the shared tier is back", metadata: ["redis": "\(status.location)"]) }
                } else {
                    logger.warning(
                        "Redis cannot be reached: serving from this node's own tiers until it answers",
                        metadata: ["redis": "\(status.location)", "error": "\(status.lastError ?? "no answer")"])
                }
                wasUp = status.up
            }
            tick += 1
            try? await Task.sleep(for: .seconds(1))
        }
        client.close()
    }

    /// Renews the claims this node holds, every second, on a thread of its
    /// own and ahead of every command queued, until `running` turns false: a
    /// renewal neither waits for Swift's cooperative pool on a busy process nor
    /// behind the polls of the nodes waiting on these very claims (a claim
    /// that lapses while its node still fetches is taken over, and the
    /// original fetched twice).
    private func renewClaims(while running: borrowing Atomic<Bool>) {
        while running.load(ordering: .relaxed) {
            Thread.sleep(forTimeInterval: 1)
            for picture in held.withLock({ Array($0) }) {
                _ = try? client.runWaiting(
                    [Array("EVAL".utf8), Array(Self.renew.utf8), Array("1".utf8), key("c", picture: picture), token, claimMilliseconds], ahead: true)
            }
        }
    }

    private func readSize() async {
        let keys = try? await client.run("DBSIZE").integer
        var used: Int?
        var max: Int?
        if case .bytes(let info)? = try? await client.run("INFO", "memory") {
            for line in String(decoding: info, as: UTF8.self).split(whereSeparator: \.isNewline) {
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2 else { continue }
                if parts[0] == "used_memory" { used = Int(parts[1]) }
                if parts[0] == "maxmemory" { max = Int(parts[1]) }
            }
        }
        counters.withLock { ($0.keys, $0.bytes, $0.maxBytes) = (keys, used, max) }
    }

    /// What the admin view shows. Claims won, waited on and fetched without
    /// one, and the owners asked, are the cache's own counts: it fills them in.
    var snapshot: CacheStats.Shared {
        let status = client.status
        var shared = CacheStats.Shared()
        (shared.location, shared.up, shared.errors, shared.busy) = (status.location, status.up, status.errors, status.busy)
        shared.problem = status.up ? nil : status.lastError
        counters.withLock {
            (shared.keys, shared.bytes, shared.maxBytes) = ($0.keys, $0.bytes, $0.maxBytes)
            (shared.hits, shared.failedHits, shared.misses, shared.writes) = ($0.hits, $0.failedHits, $0.misses, $0.writes)
            shared.claimsTakenOver = $0.claimsTakenOver
            (shared.ownersRefused, shared.badValues, shared.lifetimesCapped) = ($0.ownersRefused, $0.badValues, $0.lifetimesCapped)
            (shared.claimsBusyRetries, shared.claimsOutageRetries) = ($0.busyRetries, $0.outageRetries)
            (shared.pagesClaimed, shared.pagesWarmedElsewhere) = ($0.pagesClaimed, $0.pagesWarmedElsewhere)
            shared.latency = CacheStats.Latency($0.latency)
        }
        return shared
    }
}
