import Logging

/// Fetches whole bodies from origins over HTTP(S), and from local files when
/// allowed, with limits on time, size, redirects and schemes; or downloads
/// them into files, with conditional requests (see `download`).
///
/// All fetches share one libcurl multi handle on one dedicated thread, so
/// connections to an origin are reused and capped per host and in total, and
/// no fetch holds a thread of Swift's cooperative pool while the origin is
/// slow. Cancelling the task that awaits a fetch stops its transfer and closes
/// its connection. Every failure ends in a `FetchError`; none is a crash or a hang.
public final class OriginFetcher: Sendable {
    private let loop: TransferLoop

    /// The longest a fetch waits for a connection unless told: 30 s.
    public static let defaultQueueWait: Duration = .seconds(30)

    /// Starts the fetcher's transfer thread.
    ///
    /// - Parameters:
    ///   - maxConnectionsPerHost: connections open at once to one host; more
    ///     fetches to that host wait for one of them, urgent ones first.
    ///   - maxConnections: connections open at once in all.
    ///   - maxQueueWait: the longest a fetch waits for a connection before it
    ///     ends with `FetchError.busy`; its own timeouts start once it has one.
    ///   - userAgent: the `User-Agent` header sent to origins.
    ///   - logger: where transfers are logged (at debug level).
    public init(
        maxConnectionsPerHost: Int = 8,
        maxConnections: Int = 64,
        maxQueueWait: Duration = OriginFetcher.defaultQueueWait,
        userAgent: String = OriginFetcher.userAgent,
        logger: Logger = Logger(label: "warmfeed.origin-fetcher")
    ) {
        loop = TransferLoop(
            maxConnectionsPerHost: maxConnectionsPerHost,
            maxConnections: maxConnections,
            maxQueueWait: maxQueueWait,
            userAgent: userAgent,
            logger: logger
        )
        loop.start()
    }

    deinit {
        loop.shutDown()
    }

    /// The one `User-Agent` every fetch sends unless told otherwise: feeds
    /// refreshed or imported, and originals for thumbnails alike, so a host's
    /// operator sees one client.
    public static let userAgent = "Warmfeed/1.0"

    /// Fetches the whole body at `url` within `limits`.
    ///
    /// Redirects are followed (up to `limits.maxRedirects`, to `http` and
    /// `https` only). A status outside 2xx is an error, not a body. When the
    /// calling task is cancelled the transfer stops at once and the fetch
    /// throws `FetchError.cancelled`; after `shutdown()` every fetch does. An
    /// `urgent` fetch (someone waits on it) starts before its host's others.
    /// `headers` go with the request (checked as `RequestHeaders` checks them).
    /// With an `allowance`, the body takes its bytes from it as they arrive,
    /// and pauses while it has no room (see ``BodyAllowance``); the body
    /// comes with their ``BodyLease``.
    public func fetch(
        _ url: String, limits: FetchLimits = FetchLimits(), urgent: Bool = true, headers: [(String, String)] = [],
        allowance: BodyAllowance? = nil
    ) async throws(FetchError) -> FetchedBody {
        let reply = try await perform(url, limits: limits, destination: .memory, headers: headers, urgent: urgent, allowance: allowance)
        return FetchedBody(
            status: reply.status, contentType: reply.contentType, bytes: reply.body,
            elapsed: reply.elapsed, redirects: reply.redirects, lease: reply.lease)
    }

    /// Runs one transfer on the transfer thread, for `fetch` and `download`:
    /// checks the URL, hands the request over, and stops the transfer when the
    /// calling task is cancelled. `headers` are checked first (see `RequestHeaders`).
    /// A download answers with a final status in `passing` instead of failing.
    func perform(
        _ url: String, limits: FetchLimits, destination: BodyDestination,
        headers: [(String, String)] = [], conditional: ConditionalRequest = .init(), urgent: Bool = true,
        allowance: BodyAllowance? = nil, passing: Set<Int> = []
    ) async throws(FetchError) -> TransferReply {
        let headerLines: [String]
        do throws(FetchError) {
            if let refusal = OriginURL.refusal(for: url, allowFileScheme: limits.allowFileScheme) { throw refusal }
            headerLines = try RequestHeaders.lines(headers, conditional: conditional)
        } catch {
            loop.queue.withLock { $0.countRefused() }
            throw error
        }
        let loop = self.loop
        let id = loop.queue.withLock { $0.makeID() }
        defer { loop.queue.withLock { $0.forget(id) } }
        let startedAt = ContinuousClock.now
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                loop.submit(
                    id,
                    FetchRequest(
                        url: url, limits: limits, destination: destination, headerLines: headerLines, passing: passing,
                        startedAt: startedAt, urgent: urgent, allowance: allowance, continuation: continuation))
            }
        } onCancel: {
            loop.cancel(id)
        }
        return try result.get()
    }

    /// What the fetcher has done so far.
    public var stats: FetcherStats {
        loop.queue.withLock { $0.stats }
    }

    /// Stops the transfer thread: fetches in flight end with
    /// `FetchError.cancelled`, and so does every later fetch. Returns at once;
    /// calling it again does nothing.
    /// Someone now waits on the fetches of `url` that were submitted as not
    /// urgent: those still waiting for a connection start before the host's
    /// other non-urgent ones. Returns how many were waiting.
    @discardableResult
    public func promote(_ url: String) -> Int {
        loop.queue.withLock { $0.promote { $0.url == url } }
    }

    public func shutdown() {
        loop.shutDown()
    }
}
