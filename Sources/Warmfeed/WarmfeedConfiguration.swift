import FeedPages
import Foundation
import HTTPServer
import Operations
import OriginFetcher
import Prewarm
import RedisClient
import Thumbnailer
import Thumbnails
import WarmfeedCore

/// Everything `warmfeed serve` can be told.
public struct WarmfeedConfiguration: Sendable {
    /// Where and how the HTTP server listens.
    public var http = HTTPServerConfiguration()
    /// The folder holding the SQLite store (created when missing), the disk
    /// tier and the demo origin's pictures.
    public var dataFolder = "data"
    /// The feed store: `sqlite:PATH` or `postgres://user:password@host:port/database`;
    /// nil is `feed.sqlite` in the data folder.
    public var store: String?
    /// The feed's pages: items a page, where the sentinel sits, the memory for rendered pages.
    public var pages = PagesConfiguration()
    /// The thin client's folder, served under `/static/`.
    public var publicFolder = "Public"
    /// The Mustache templates' folder.
    public var templatesFolder = "Templates"
    /// How many demo items to seed into an empty store (0: none).
    public var demoItems = 10_000
    /// The thumbnails: their memory, disk and decode budgets, how long a
    /// failure is remembered, how long a reader waits.
    public var thumbnails = ThumbnailsConfiguration()
    /// Pre-warm: the pages it warms ahead of each reader (0: none), and how
    /// long page 1 is held at start while it is warmed.
    public var prewarm = PrewarmConfiguration()
    /// The demo origin's latency (jittered ±20%).
    public var originLatency: Duration = .milliseconds(250)
    /// The origin fetch's total timeout.
    public var originTimeout: Duration = .seconds(10)
    /// An origin that sends under `originStallRate` (512) bytes a second for this long is cut
    /// (the wait for its first byte included): a dripping origin fails fast.
    public var originStall: Duration = .seconds(5)
    /// Connections open at once to one origin host; more fetches wait for one,
    /// readers' first, for at most `originQueueWait` (then the placeholder, not remembered).
    public var originConnections = 16
    /// The longest an origin fetch waits for a connection.
    public var originQueueWait = OriginFetcher.defaultQueueWait
    /// Where the demo origin keeps its pool of originals, painted once; nil is
    /// `demo-origin/pool` in the data folder. Servers (and tests) may share one.
    public var demoPoolFolder: String?
    /// The admin token; nil loads it from WARMFEED_ADMIN_TOKEN or the data
    /// folder. At least `AdminToken.minimumLength` characters, wherever it comes from.
    public var adminToken: String?
    /// The proxies (IPv4 addresses or networks, `172.16.0.0/12`) whose
    /// `X-Forwarded-For` names the client an admin sign-in is counted against;
    /// none by default: every request is counted against its connection's address.
    public var trustedProxies: [String] = []
    /// The first wait of an address that offered too many wrong admin tokens
    /// (`SignInThrottle`: it doubles with each further one); tests lengthen it.
    public var signInFirstWait: Duration = .seconds(SignInThrottle.Rules.defaultFirstWait)
    /// The sources polled into the river (feed URLs or files, folders of
    /// images, OPML or plain lists of them); none serves what the store holds
    /// (the demo feed in an empty store).
    public var sources: [String] = []
    /// Each source's default interval between polls, and how often the lists
    /// are read again (URL sources send their validators, so an unchanged
    /// feed costs one 304); nil polls at start, then daily.
    public var refreshInterval: Duration?
    /// The largest feed document a poll downloads (`--source-max-mb`); nil: the poller's default.
    public var sourceMaxBytes: Int?

    /// The shared thumbnail tier of a cluster: `redis://[:password@]host:port/db`; nil keeps every tier in this process.
    public var redis: String?
    /// The cluster's nodes (`http://node2:8080`), the only ones this node
    /// asks for the sizes of an original another node fetched: an owner
    /// record in Redis naming any other address is not believed. May include
    /// this node itself; empty: no other node is asked.
    public var peers: [String] = []
    /// An origin serving the demo items' originals (`warmfeed origin`), so the
    /// nodes of a cluster share one; nil runs the demo origin inside this process.
    public var demoOrigin: String?
    /// Hosts (`HOST`, `HOST:PORT`) and networks (CIDR, or one address) a
    /// feed's images may be fetched from besides public addresses
    /// (`--allow-origin`). Empty: public addresses only, as imgproxy and
    /// Miniflux do; the demo origin and the cluster's nodes are the server's
    /// own and need no allowance.
    public var allowedOrigins: [String] = []
    /// This node's name in the admin view, the logs and its claims (the host name by default).
    public var nodeName = Self.hostName()
    /// This node's address as the other nodes of a cluster reach it, such as
    /// `http://node1:8080`: they ask it for the sizes of the originals it
    /// fetched. Nil: `http://HOST:PORT` as bound, with the node name for
    /// HOST when listening on 0.0.0.0.
    public var advertisedAddress: String?

    /// gethostname(2): no name lookup (Foundation's `hostName` may ask DNS).
    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "warmfeed" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The defaults.
    public init() {}

    /// Checks values a user can get wrong, with a message that names the
    /// option (the admin token: this one, or `WARMFEED_ADMIN_TOKEN` in `environment`).
    public func validate(environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigurationError) {
        _ = try StoreLocation(store, dataFolder: dataFolder)
        do throws(AdminToken.Refused) {
            if let adminToken {
                try AdminToken.check(adminToken, from: "the configured admin token")
            } else if let given = environment["WARMFEED_ADMIN_TOKEN"], !given.isEmpty {
                try AdminToken.check(given, from: "WARMFEED_ADMIN_TOKEN")
            }
        } catch {
            throw ConfigurationError(error.description)
        }
        guard (1...1000).contains(pages.size) else { throw ConfigurationError("--page-size must be from 1 to 1000") }
        guard pages.threshold > 0, pages.threshold <= 1 else { throw ConfigurationError("--threshold must be above 0 and at most 1") }
        guard (0...65535).contains(http.port) else { throw ConfigurationError("--port must be from 0 to 65535") }
        guard (1...1_000_000).contains(http.connectionLimit) else { throw ConfigurationError("--max-connections must be from 1 to 1000000") }
        guard http.connectionsPerAddress >= 1 else { throw ConfigurationError("--max-connections-per-address must be at least 1") }
        guard (1...3600).contains(http.headTimeout) else { throw ConfigurationError("--head-timeout must be from 1 to 3600 seconds") }
        guard demoItems >= 0 else { throw ConfigurationError("--demo-items cannot be negative") }
        let budgets = [
            thumbnails.memoryBytes, thumbnails.diskBytes, pages.cacheBytes, thumbnails.originalsBytes, thumbnails.diskIndexBytes, thumbnails.originalsDiskBytes,
        ]
        guard budgets.allSatisfy({ $0 >= 0 }) else { throw ConfigurationError("cache sizes cannot be negative") }
        guard thumbnails.decodeBytes >= 16 << 20 else { throw ConfigurationError("--decode-mb must be at least 16") }
        if let advertisedAddress {
            let lower = advertisedAddress.lowercased()
            guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), advertisedAddress.count > 8, !advertisedAddress.contains(where: \.isWhitespace)
            else {
                throw ConfigurationError("--advertise must be an http:// or https:// URL, such as http://node1:8080")
            }
        }
        do throws(TrustedProxies.Refused) { _ = try TrustedProxies(trustedProxies) } catch { throw ConfigurationError(error.description) }
        guard (0...20).contains(prewarm.pages) else { throw ConfigurationError("--prewarm must be from 0 to 20") }
        if let refreshInterval {
            guard !sources.isEmpty else { throw ConfigurationError("--refresh needs --source") }
            guard refreshInterval >= .seconds(1) else { throw ConfigurationError("--refresh must be at least 1s") }
        }
        guard thumbnails.answerWithin >= .seconds(1), thumbnails.answerWithin <= .seconds(600) else {
            throw ConfigurationError("--thumb-wait must be from 1 to 600 seconds")
        }
        guard originLatency >= .zero, originLatency <= .seconds(60) else { throw ConfigurationError("--origin-latency must be from 0 to 60 s") }
        if let redis {
            do throws(RedisError) { _ = try RedisLocation(redis) } catch { throw ConfigurationError("--redis: \(error)") }
        }
        _ = try originAllowances()
        for peer in peers where KnownPeers.canonical(peer) == nil {
            throw ConfigurationError("--peer \(peer): a node's address is an http:// or https:// URL with no path, such as http://node2:8080")
        }
        if let demoOrigin {
            let lower = demoOrigin.lowercased()
            guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), demoOrigin.count > 8, !demoOrigin.contains(where: \.isWhitespace) else {
                throw ConfigurationError("--demo-origin must be an http:// or https:// URL, such as http://origin:8090")
            }
        }
    }
}

extension WarmfeedConfiguration {
    /// The slowest an origin may send (bytes a second) for `originStall` before it is cut.
    static let originStallRate = 512

    /// Connections open at once to every origin together: four hosts' worth
    /// of `originConnections`, and never fewer than 64.
    var originConnectionsInAll: Int { max(64, originConnections * 4) }

    /// The limits a thumbnail's original is fetched under: `originTimeout` in
    /// all, cut after `originStall` under `originStallRate` (the wait for the
    /// first byte included, so a slow-to-answer origin gets that long), and
    /// public addresses only, with what the operator allowed (the demo
    /// origin's and the cluster's own URLs are the server's, fetched apart:
    /// `ThumbnailService`).
    func originalsFetchLimits() throws(ConfigurationError) -> FetchLimits {
        var limits = FetchLimits()
        limits.totalTimeout = originTimeout
        limits.lowSpeedLimit = Self.originStallRate
        limits.lowSpeedTime = originStall
        limits.addressPolicy = .publicOnly(allowing: try originAllowances())
        return limits
    }

    /// `allowedOrigins`, read; names the one that is neither a host nor a network.
    func originAllowances() throws(ConfigurationError) -> [OriginAllowance] {
        try allowedOrigins.map { text throws(ConfigurationError) in
            guard let allowance = OriginAllowance(text) else {
                throw ConfigurationError(
                    "--allow-origin \(text): not a host (HOST or HOST:PORT), an address ([::1]:8080) or a network (10.0.0.0/8)")
            }
            return allowance
        }
    }
}

/// A configuration value that cannot work.
public struct ConfigurationError: Error, CustomStringConvertible {
    /// What is wrong, naming the option.
    public var description: String
    init(_ description: String) { self.description = description }
}
