import CCurl
import Foundation
import Reckoning

/// One libcurl easy handle and the body it collects (in memory, or streamed to
/// a file). It lives on the transfer thread only: made there, driven there by
/// `curl_multi_perform`, ended there.
final class Transfer {
    /// The fetch's identifier in the `FetchQueue`.
    let id: UInt64
    /// What was asked.
    let request: FetchRequest
    /// The easy handle, cleaned up exactly once, in `deinit`.
    let easy: UnsafeMutableRawPointer
    /// When the total timeout runs out, counted from the hand-over to libcurl.
    let deadline: ContinuousClock.Instant

    private var body: [UInt8] = []
    /// The download's file, for `.file`.
    private let file: PartFile?
    /// The final response's validators and freshness headers, for `.file`.
    private var responseHeaders = ResponseHeaders()
    /// Body bytes of a passed status, counted against the limit and dropped.
    private var dropped = 0
    private var bodyLimitExceeded = false
    /// The allowance's token for this transfer's body, when it has an allowance.
    let allowanceToken: UInt64?
    /// Bytes of the allowance this body holds: what its buffer can hold.
    private var allowed = 0
    /// Whether the body is handed over (its bytes then go with it, in a lease).
    private var handedOver = false
    /// Whether the write callback paused the transfer for room in the
    /// allowance; the loop resumes it (`resumeForRoom`) on its next turn.
    private(set) var pausedForRoom = false
    /// Whether it ever waited for room: its time then ran on this server's
    /// memory, not on the origin, and running out of it is `busy`, not `timedOut`.
    private(set) var waitedForRoom = false
    /// Wakes the transfer loop (`curl_multi_wakeup`), for an allowance that has room again.
    var wake: (@Sendable () -> Void)?
    /// libcurl writes its explanation of a failure here (CURLOPT_ERRORBUFFER).
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// The extra request headers (CURLOPT_HTTPHEADER), which libcurl reads
    /// but does not copy: freed in `deinit`, after the easy handle.
    private var headerList: UnsafeMutablePointer<curl_slist>?

    /// The descriptor of a `file://` URL's file opened beneath `fileRoots`
    /// (-1 for none), which libcurl reads through; closed in `deinit`.
    private var confinedFile: Int32 = -1
    /// The host of the hop whose connection the address policy refused last,
    /// and whether the last connection judged was refused (a name's other
    /// address, tried next, may have been admitted).
    private var refusedHost: String?
    private var lastConnectionRefused = false

    /// Whether this transfer is the one retry of a fetch whose reused
    /// connection failed before a byte of the answer (see `mayRetryOnFreshConnection`).
    let isRetry: Bool

    /// Makes and configures the easy handle; fails when libcurl refuses.
    /// A `retry` goes out on a new connection (`CURLOPT_FRESH_CONNECT`).
    init(id: UInt64, request: FetchRequest, userAgent: String, retry: Bool = false) throws(FetchError) {
        guard let easy = curl_easy_init() else { throw .connectionFailed("curl_easy_init failed") }
        self.id = id
        self.request = request
        self.easy = easy
        isRetry = retry
        allowanceToken = request.allowance?.register()
        // Counted from now, when the fetch got its connection: the wait in the
        // queue has its own bound, and a busy origin is not a slow one.
        deadline = ContinuousClock.now + request.limits.totalTimeout
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        if case .file(let path) = request.destination { file = PartFile(path: path) } else { file = nil }
        try configure(userAgent: userAgent)
    }

    deinit {
        // A body not handed over (a failure, a cancellation) lets its bytes go.
        if let allowanceToken, !handedOver { _ = request.allowance?.end(allowanceToken, keeping: false) }
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
        if confinedFile >= 0 { close(confinedFile) }
    }

    /// `WARMFEED_CURL_VERBOSE=1` in the environment: libcurl writes what it does to stderr.
    static let verbose = ProcessInfo.processInfo.environment["WARMFEED_CURL_VERBOSE"] == "1"

    private func configure(userAgent: String) throws(FetchError) {
        let limits = request.limits
        let protocols = limits.allowFileScheme ? "http,https,file" : "http,https"
        var url = request.url
        let isFile = limits.allowFileScheme && OriginURL.scheme(of: url) == "file"
        if isFile, let roots = limits.fileRoots {
            (confinedFile, url) = try ConfinedFile.open(url, roots: roots)
        }
        try set(CURLOPT_URL, url)
        try set(CURLOPT_PROTOCOLS_STR, protocols)
        try set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        try set(CURLOPT_USERAGENT, userAgent)
        try set(CURLOPT_NOSIGNAL, 1)
        // libcurl's own account of each transfer on stderr, for chasing a fetch that misbehaves.
        if Self.verbose { try set(CURLOPT_VERBOSE, 1) }
        if isRetry { try set(CURLOPT_FRESH_CONNECT, 1) }
        try set(CURLOPT_FOLLOWLOCATION, 1)
        try set(CURLOPT_MAXREDIRS, max(0, limits.maxRedirects))
        // Statuses of 400 and over end the transfer before their body is read.
        try set(CURLOPT_FAILONERROR, 1)
        try set(CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(limits.connectTimeout.wholeMillisecondsRoundedUp)))
        try set(CURLOPT_TIMEOUT_MS, max(1, Int(limits.totalTimeout.wholeMillisecondsRoundedUp)))
        if limits.lowSpeedLimit > 0 {
            try set(CURLOPT_LOW_SPEED_LIMIT, limits.lowSpeedLimit)
            try set(CURLOPT_LOW_SPEED_TIME, max(1, Int(limits.lowSpeedTime.components.seconds)))
        }
        if limits.maxBodyBytes > 0 {
            // Refuses a declared Content-Length over the limit before any body is read
            // (0 would mean "no limit", so the write callback alone covers that case).
            try check(wf_easy_setopt_off(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(limits.maxBodyBytes)))
        }
        // No CURLOPT_ACCEPT_ENCODING: no Accept-Encoding is sent and nothing is
        // decoded, so the body limit counts the bytes the caller gets.
        try check(wf_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer))
        try check(wf_easy_setopt_write_callback(easy, CURLOPT_WRITEFUNCTION, CurlCallbacks.writeBody))
        // Unretained: see `CurlCallbacks.writeBody` for who keeps the transfer alive.
        let unretained = Unmanaged.passUnretained(self).toOpaque()
        // Every socket is opened by the callback, which asks the address policy first.
        try check(wf_easy_setopt_open_socket(easy, CurlCallbacks.openSocket))
        try check(wf_easy_setopt_pointer(easy, CURLOPT_OPENSOCKETDATA, unretained))
        // A file has no address (libcurl would ask the pre-request callback with none).
        if limits.addressPolicy.publicOnly, !isFile {
            // A kept-alive connection is judged again before each request goes out on it.
            try check(wf_easy_setopt_prereq(easy, CurlCallbacks.checkConnection))
            try check(wf_easy_setopt_pointer(easy, CURLOPT_PREREQDATA, unretained))
            // No proxy, whatever http_proxy, https_proxy or ALL_PROXY say: the policy
            // judges the origin's address, which a proxy would connect to in its stead.
            try set(CURLOPT_PROXY, "")
            try set(CURLOPT_NOPROXY, "*")
        }
        try check(wf_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, unretained))
        if !request.headerLines.isEmpty {
            headerList = RequestHeaders.list(request.headerLines)
            guard let headerList else { throw .connectionFailed("curl_slist_append failed: out of memory") }
            try check(wf_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, headerList))
        }
        if file != nil {
            try check(wf_easy_setopt_write_callback(easy, CURLOPT_HEADERFUNCTION, CurlCallbacks.receiveHeader))
            try check(wf_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, unretained))
        }
    }

    /// Whether the fetch's address policy lets this transfer connect to
    /// `address` on `port` for the hop under way (the open-socket and
    /// pre-request callbacks ask); a refusal is remembered for the error.
    /// A nil address (a family that is not IP, an address that did not parse) is refused.
    func admitsConnection(to address: IPAddress?, port: Int) -> Bool {
        let policy = request.limits.addressPolicy
        guard policy.publicOnly else { return true }
        // libcurl's effective URL is the hop being connected: the first URL, then each redirect's.
        let admitted = address.map { policy.admits($0, port: port, host: { hopHost }) } ?? false
        lastConnectionRefused = !admitted
        if !admitted {
            refusedHost = hopHost ?? address.map { "\($0)" } ?? "?"
        }
        return admitted
    }

    /// The host of the URL libcurl is on now (the first URL's, then each redirect's).
    private var hopHost: String? {
        string(CURLINFO_EFFECTIVE_URL).flatMap(OriginURL.hostName(of:))
    }

    /// Takes a piece of body from the write callback; answers the bytes taken.
    func receive(_ chunk: UnsafeRawBufferPointer) -> Int {
        let limit = max(0, request.limits.maxBodyBytes)
        guard received + chunk.count <= limit else {
            bodyLimitExceeded = true
            return chunk.count == 0 ? 1 : 0
        }
        if let file {
            // A passed status's body (one under 400: libcurl ends the rest at
            // their headers, CURLOPT_FAILONERROR) is not the copy asked for.
            if !request.passing.isEmpty, passes(responseCode) {
                dropped += chunk.count
                return chunk.count
            }
            return file.append(chunk) ? chunk.count : 0
        }
        let needed = body.count + chunk.count
        if needed > allowed {
            // The buffer grows here, by the declared length or by doubling (as an
            // array does), and what it can hold is what the allowance counts.
            var declared: curl_off_t = -1
            let known = wf_easy_getinfo_off(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &declared) == CURLE_OK && declared > 0
            let grown = min(limit, max(needed, known && allowed == 0 ? Int(declared) : allowed * 2))
            guard let size = room(needing: needed, wanting: grown) else {
                pausedForRoom = true
                waitedForRoom = true
                if let allowanceToken, let wake { request.allowance?.pause(allowanceToken, wake: wake) }
                return Int(CURL_WRITEFUNC_PAUSE)
            }
            body.reserveCapacity(size)
            allowed = size
        }
        pausedForRoom = false
        body.append(contentsOf: chunk)
        return chunk.count
    }

    /// The size the body's buffer may grow to, at least `needed`, at most
    /// `wanted`: `wanted` without an allowance, else what it gives; nil when
    /// it gives no room.
    private func room(needing needed: Int, wanting wanted: Int) -> Int? {
        guard let allowance = request.allowance, let allowanceToken else { return wanted }
        return allowance.take(allowanceToken, atLeast: needed - allowed, upTo: wanted - allowed).map { allowed + $0 }
    }

    /// Resumes a transfer paused for room: libcurl hands the chunk it kept to
    /// the write callback again, which pauses it again while there is still none.
    func resumeForRoom() {
        pausedForRoom = false
        _ = wf_easy_resume(easy)
    }

    /// The lease of the body's bytes in its allowance, once, as the body goes to the caller.
    private func handOver() -> BodyLease? {
        guard let allowanceToken, let allowance = request.allowance, !handedOver else { return nil }
        handedOver = true
        return allowance.end(allowanceToken, keeping: true)
    }

    /// Takes a header line from the header callback (downloads only).
    func receiveHeader(_ line: UnsafeRawBufferPointer) {
        responseHeaders.take(line)
    }

    /// Body bytes taken so far.
    private var received: Int { (file?.bytesWritten ?? body.count) + dropped }

    /// Whether `status` is one the download was asked to answer with instead
    /// of failing: in `passing`, and neither 2xx nor 304 (which are answered
    /// as always, whatever `passing` says).
    private func passes(_ status: Int) -> Bool {
        file != nil && request.passing.contains(status) && !(200..<300).contains(status) && status != 304
    }

    /// The fetch's result once libcurl has ended the transfer with `code`.
    func result(for code: CURLcode) -> Result<TransferReply, FetchError> {
        // libcurl ends a status of 400 or over at the end of its headers
        // (CURLOPT_FAILONERROR): all of them were taken, its body never read.
        let passed = code == CURLE_HTTP_RETURNED_ERROR && passes(responseCode)
        guard code == CURLE_OK || passed else { return .failure(error(for: code)) }
        var status = responseCode
        if status == 0, scheme == "FILE" { status = 200 }
        // A 304 is an answer only to a download, which may have sent validators.
        guard (200..<300).contains(status) || (status == 304 && file != nil) || passes(status) else {
            return .failure(.httpStatus(status))
        }
        return .success(
            TransferReply(
                status: status,
                contentType: file == nil ? string(CURLINFO_CONTENT_TYPE) : responseHeaders.contentType,
                etag: responseHeaders.etag,
                lastModified: responseHeaders.lastModified,
                freshness: file == nil ? ResponseFreshness() : responseHeaders.freshness(now: Int64(time(nil))),
                // A confined file is read through its descriptor's path: the URL asked for is the one to report.
                finalURL: confinedFile >= 0 ? request.url : string(CURLINFO_EFFECTIVE_URL) ?? request.url,
                redirects: redirectCount,
                body: body,
                bodyBytes: passes(status) ? 0 : received,
                lease: handOver(),
                elapsed: ContinuousClock.now - request.startedAt
            ))
    }

    /// Whether a failure with `code` should be tried once more on a new
    /// connection rather than reported: the request went out on a connection
    /// kept from an earlier one (libcurl made no new connection for it), and
    /// it failed before a byte of its answer arrived, or its answer was a 408.
    ///
    /// Origins, CDNs and load balancers close idle keep-alive connections,
    /// some with an unasked `408` first (RFC 9112 §9.5 allows it); libcurl
    /// 7.88 reuses such a connection when a byte waits on it and reads that
    /// stale 408 as the answer, or sends into a connection closed as it was
    /// reused. Browsers retry such a request once on a new connection, and so
    /// does this. A failure on a new connection (refused, reset, a 5xx, a
    /// timeout, garbage) is the origin's and is never retried.
    func mayRetryOnFreshConnection(after code: CURLcode) -> Bool {
        guard !isRetry, code != CURLE_OK, received == 0, newConnections == 0 else { return false }
        switch code {
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_WEIRD_SERVER_REPLY:
            return true
        case CURLE_HTTP_RETURNED_ERROR:
            return responseCode == 408
        default:
            return false
        }
    }

    /// Connections libcurl opened for this transfer (0 when it reused one).
    private var newConnections: Int {
        var value = 0
        _ = wf_easy_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &value)
        return value
    }

    /// The result the caller gets: a download's file is put in place on a
    /// 2xx, and its part file removed on anything else (a 304, a passed
    /// status, a failure), before the caller hears of it.
    func settle(_ result: Result<TransferReply, FetchError>) -> Result<TransferReply, FetchError> {
        guard let file else { return result }
        guard case .success(var reply) = result, (200..<300).contains(reply.status) else {
            file.discard()
            return result
        }
        do {
            try file.commit()
        } catch {
            return .failure(error)
        }
        reply.elapsed = ContinuousClock.now - request.startedAt
        return .success(reply)
    }

    /// Maps libcurl's failure to the fetcher's own.
    private func error(for code: CURLcode) -> FetchError {
        if lastConnectionRefused, let refusedHost, code == CURLE_COULDNT_CONNECT || code == CURLE_ABORTED_BY_CALLBACK {
            return .addressRefused(refusedHost)
        }
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            return waitedForRoom ? .busy : .timedOut
        case CURLE_FILESIZE_EXCEEDED:
            return .tooLarge
        case CURLE_WRITE_ERROR where bodyLimitExceeded:
            return .tooLarge
        case CURLE_WRITE_ERROR where file?.failure != nil:
            return .writeFailed(file?.failure ?? "")
        case CURLE_TOO_MANY_REDIRECTS:
            return .tooManyRedirects
        case CURLE_HTTP_RETURNED_ERROR:
            return .httpStatus(responseCode)
        case CURLE_URL_MALFORMAT:
            return .invalidURL
        case CURLE_UNSUPPORTED_PROTOCOL:
            // The first URL's scheme was checked before the transfer, so this is
            // either a redirect to a refused scheme or a reply that is not HTTP
            // (libcurl refuses HTTP/0.9, i.e. bare bytes with no status line).
            let redirected = redirectCount > 0 || (300..<400).contains(responseCode)
            return redirected ? .schemeNotAllowed : .invalidResponse(message(for: code))
        case CURLE_WEIRD_SERVER_REPLY, CURLE_BAD_CONTENT_ENCODING:
            return .invalidResponse(message(for: code))
        default:
            return .connectionFailed(message(for: code))
        }
    }

    /// libcurl's explanation of `code`: the error buffer when it was filled, else the generic text.
    func message(for code: CURLcode) -> String {
        if errorBuffer.pointee != 0 { return String(cString: errorBuffer) }
        return String(cString: curl_easy_strerror(code))
    }

    private var responseCode: Int {
        var value = 0
        _ = wf_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &value)
        return value
    }

    private var redirectCount: Int {
        var value = 0
        _ = wf_easy_getinfo_long(easy, CURLINFO_REDIRECT_COUNT, &value)
        return value
    }

    private var scheme: String? { string(CURLINFO_SCHEME) }

    private func string(_ info: CURLINFO) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard wf_easy_getinfo_string(easy, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }

    private func set(_ option: CURLoption, _ value: String) throws(FetchError) {
        try check(value.withCString { wf_easy_setopt_string(easy, option, $0) })
    }

    private func set(_ option: CURLoption, _ value: Int) throws(FetchError) {
        try check(wf_easy_setopt_long(easy, option, value))
    }

    private func check(_ code: CURLcode) throws(FetchError) {
        guard code == CURLE_OK else {
            if code == CURLE_UNSUPPORTED_PROTOCOL { throw .schemeNotAllowed }
            throw .connectionFailed("curl_easy_setopt: " + String(cString: curl_easy_strerror(code)))
        }
    }
}
