import CCurl
import Foundation
import Logging
import Reckoning
import Synchronization

/// One libcurl multi handle driven by one dedicated thread.
///
/// Transfers are slow (network) but cheap (a callback per few KB), so one
/// thread waiting in `curl_multi_poll` serves them all without taking a thread
/// from Swift's cooperative pool; the multi handle shares its connection cache
/// among all of them, which is what gives connection reuse and the caps on
/// connections per host and in total. Callers never touch libcurl: they put
/// work in the `FetchQueue` and wake the thread with `curl_multi_wakeup`.
// @unchecked Sendable: `multi`, `transfers` and `handles` are touched only on
// the transfer thread (and in deinit, when no thread holds a reference any
// more), except `curl_multi_wakeup`, which libcurl allows from any thread; the
// queue is behind a Mutex.
final class TransferLoop: @unchecked Sendable {
    /// The hand-over from callers to the thread.
    let queue: Mutex<FetchQueue<FetchRequest>>

    private let multi: UnsafeMutableRawPointer
    private let userAgent: String
    private let logger: Logger
    private var transfers: [UInt64: Transfer] = [:]
    private var handles: [UnsafeMutableRawPointer: UInt64] = [:]

    /// Makes the multi handle; `start` starts its thread.
    init(maxConnectionsPerHost: Int, maxConnections: Int, maxQueueWait: Duration, userAgent: String, logger: Logger) {
        queue = Mutex(FetchQueue(maxPerHost: maxConnectionsPerHost, maxTotal: maxConnections, maxWait: maxQueueWait))
        CurlGlobal.ensureInitialized()
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed: out of memory") }
        self.multi = multi
        self.userAgent = userAgent
        self.logger = logger
        // No CURLMOPT_MAX_HOST_CONNECTIONS or MAX_TOTAL_CONNECTIONS: the queue
        // holds both caps (see `FetchQueue`), so libcurl never parks a transfer.
        // The idle connections kept for reuse: as many as may be open at once.
        _ = wf_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(1, maxConnections))
    }

    deinit {
        // Every easy handle was removed and cleaned up before the thread ended.
        curl_multi_cleanup(multi)
    }

    /// Starts the transfer thread. It holds the loop until `shutDown` ends it.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "warmfeed-origin-fetcher"
        thread.start()
    }

    /// Hands a fetch to the thread, or ends it with `cancelled` when refused.
    func submit(_ id: UInt64, _ request: FetchRequest) {
        let host = OriginURL.host(of: request.url)
        let now = ContinuousClock.now
        switch queue.withLock({ $0.submit(id, request, host: host, urgent: request.urgent, now: now) }) {
        case .wakeLoop: wake()
        case .refuse(let request): request.resume(.failure(.cancelled))
        }
    }

    /// The fetch's task was cancelled.
    func cancel(_ id: UInt64) {
        switch queue.withLock({ $0.cancel(id) }) {
        case .none: break
        case .wakeLoop: wake()
        case .resume(let request): request.resume(.failure(.cancelled))
        }
    }

    /// Stops accepting work and ends every fetch with `cancelled`; the thread
    /// removes the running transfers and stops. Idempotent.
    func shutDown() {
        let dropped = queue.withLock { $0.shutDown() }
        for request in dropped { request.resume(.failure(.cancelled)) }
        wake()
    }

    private func wake() {
        _ = curl_multi_wakeup(multi)
    }

    // MARK: On the transfer thread only

    private func run() {
        logger.debug("origin fetcher thread started")
        var stillRunning: Int32 = 0
        while true {
            let now = ContinuousClock.now
            let inbox = queue.withLock { $0.takeInbox(now: now) }
            for (id, request) in inbox.start { begin(id, request) }
            for id in inbox.cancel { end(id, .failure(.cancelled)) }
            for request in inbox.expired { request.resume(.failure(.busy)) }
            if inbox.shutDown {
                for id in Array(transfers.keys) { end(id, .failure(.cancelled)) }
                break
            }
            let performed = curl_multi_perform(multi, &stillRunning)
            if performed != CURLM_OK {
                logger.error("curl_multi_perform failed", metadata: ["code": "\(performed.rawValue)"])
            }
            collectFinished()
            let paused = resumePausedForRoom()
            // A transfer that ended freed a connection a waiting fetch can have at once.
            var wait = queue.withLock({ $0.canStartMore }) ? 0 : endOverdue()
            // Room in an allowance comes as other bodies end or are let go: look again soon.
            if paused { wait = min(wait, 20) }
            // Sleeps until a socket is ready, libcurl's next timeout, a wakeup, or the next deadline.
            _ = curl_multi_poll(multi, nil, 0, wait, nil)
        }
        logger.debug("origin fetcher thread stopped")
    }

    private func begin(_ id: UInt64, _ request: FetchRequest, retry: Bool = false) {
        let transfer: Transfer
        do {
            transfer = try Transfer(id: id, request: request, userAgent: userAgent, retry: retry)
        } catch {
            finish(id, request: request, .failure(error))
            return
        }
        let added = curl_multi_add_handle(multi, transfer.easy)
        guard added == CURLM_OK else {
            let text = String(cString: curl_multi_strerror(added))
            finish(id, request: request, .failure(.connectionFailed("curl_multi_add_handle: \(text)")))
            return
        }
        transfers[id] = transfer
        handles[transfer.easy] = id
        if request.allowance != nil {
            // Weak: the allowance may outlive this loop (curl_multi_wakeup may be called from any thread).
            transfer.wake = { [weak self] in self?.wake() }
        }
    }

    private func collectFinished() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                let id = handles[easy], let transfer = transfers[id]
            else { continue }
            // Read the code before the message is invalidated by the removal below.
            let code = message.pointee.data.result
            if transfer.mayRetryOnFreshConnection(after: code) {
                retry(id, transfer)
            } else {
                end(id, transfer.result(for: code))
            }
        }
    }

    /// Resumes the transfers paused for room in their body's allowance (each
    /// pauses again while there is none), and ends with `busy` the one an
    /// allowance names as stalled: every fetch holding its bytes is paused
    /// and none will be let go. Answers whether any is still paused.
    private func resumePausedForRoom() -> Bool {
        let waiting = transfers.filter { $0.value.pausedForRoom }
        guard !waiting.isEmpty else { return false }
        for transfer in waiting.values { transfer.resumeForRoom() }
        var stillPaused = false
        var asked: Set<ObjectIdentifier> = []
        for (_, transfer) in waiting where transfer.pausedForRoom {
            stillPaused = true
            guard let allowance = transfer.request.allowance, asked.insert(ObjectIdentifier(allowance)).inserted,
                let token = allowance.stalled(),
                let (id, _) = transfers.first(where: { $0.value.allowanceToken == token && $0.value.request.allowance === allowance })
            else { continue }
            allowance.countShed()
            logger.debug("ended for room in its allowance", metadata: ["url": "\(transfers[id]?.request.url ?? "")"])
            end(id, .failure(.busy))
        }
        return stillPaused
    }

    /// Replaces a transfer whose reused connection failed before its answer
    /// with one on a new connection, keeping its place: it holds its host's
    /// connection slot throughout, and its caller hears only of the retry's end.
    private func retry(_ id: UInt64, _ failed: Transfer) {
        transfers.removeValue(forKey: id)
        handles.removeValue(forKey: failed.easy)
        _ = curl_multi_remove_handle(multi, failed.easy)
        queue.withLock { $0.countRetry() }
        logger.debug("retrying on a new connection", metadata: ["url": "\(failed.request.url)"])
        begin(id, failed.request, retry: true)
        // `failed` is released here: its easy handle is cleaned up, and a
        // download's part file (empty: no byte of body came) removed.
    }

    /// Ends the transfers past their total timeout; answers how long to wait,
    /// in milliseconds, for the next deadline (a second at most).
    ///
    /// libcurl enforces CURLOPT_TIMEOUT_MS itself; this is the backstop that
    /// keeps the promise that a fetch ends within its timeout, whatever state
    /// libcurl holds it in.
    private func endOverdue() -> Int32 {
        let now = ContinuousClock.now
        var next = now + .seconds(1)
        var overdue: [UInt64] = []
        for (id, transfer) in transfers {
            if transfer.deadline <= now { overdue.append(id) } else { next = min(next, transfer.deadline) }
        }
        for id in overdue { end(id, .failure(transfers[id]?.waitedForRoom == true ? .busy : .timedOut)) }
        return Int32(clamping: max(1, (next - now).wholeMillisecondsRoundedUp))
    }

    /// Removes a running transfer from the multi (closing its connection when it
    /// was mid-transfer), puts a download's file in place or removes its part
    /// file, then ends its fetch.
    private func end(_ id: UInt64, _ result: Result<TransferReply, FetchError>) {
        guard let transfer = transfers.removeValue(forKey: id) else { return }
        handles.removeValue(forKey: transfer.easy)
        _ = curl_multi_remove_handle(multi, transfer.easy)
        finish(id, request: transfer.request, transfer.settle(result))
        // `transfer` is released here, which cleans up its easy handle.
    }

    /// Counts the end, then resumes the caller: a caller that reads the stats
    /// after its fetch returned sees its own fetch counted.
    private func finish(_ id: UInt64, request: FetchRequest, _ result: Result<TransferReply, FetchError>) {
        let outcome: FetchQueue<FetchRequest>.Outcome
        switch result {
        case .success: outcome = .finished
        case .failure(.cancelled): outcome = .cancelled
        case .failure(.addressRefused), .failure(.fileRefused): outcome = .refused
        case .failure: outcome = .failed
        }
        queue.withLock { _ = $0.ended(id, outcome) }
        switch result {
        case .success(let reply):
            logger.debug(
                "fetched",
                metadata: [
                    "url": "\(request.url)", "status": "\(reply.status)", "bytes": "\(reply.bodyBytes)",
                    "elapsed": "\(reply.elapsed)", "redirects": "\(reply.redirects)",
                ])
        case .failure(let error):
            logger.debug("fetch failed", metadata: ["url": "\(request.url)", "error": "\(error)"])
        }
        request.resume(result)
    }
}
