import Logging
import OriginFetcher
import Synchronization

/// How an original is fetched, by where its URL came from (`ImageSource.Original.Kind`),
/// and how a refusal is told.
extension ThumbnailService {
    /// Fetches `original`'s bytes under the limits its kind calls for: a
    /// feed's URL under the configured address policy (`limits`), the demo
    /// origin's (built by the server from its own configuration) anywhere but
    /// with no redirect, a folder import's file only beneath the folders
    /// imported, asked again once when it was refused (a folder may have been
    /// imported since they were read).
    func fetchBody(of original: ImageSource.Original, urgent: Bool) async throws(FetchError) -> FetchedBody {
        var limits = limits
        switch original.kind {
        case .feed:
            break
        case .demo:
            limits.addressPolicy = .anywhere
            limits.maxRedirects = 0
        case .file:
            // Only a folder import stores file:// URLs (feeds are refused them at import);
            // libcurl never follows a redirect into file:// whatever this says.
            limits.allowFileScheme = true
            let folders = await origin.folders(false)
            limits.fileRoots = folders
            do throws(FetchError) {
                return try await fetcher.fetch(original.url, limits: limits, urgent: urgent, allowance: bodies)
            } catch .fileRefused(let path) {
                let again = await origin.folders(true)
                guard again != folders else { throw .fileRefused(path) }
                limits.fileRoots = again
            }
        }
        return try await fetcher.fetch(original.url, limits: limits, urgent: urgent, allowance: bodies)
    }

    /// Whether `error` is a refusal of where the URL leads; the first refusal
    /// of each host (or folder) is logged, while at most `RefusalLog.capacity`
    /// are remembered.
    func isRefusal(_ error: FetchError, url: String) -> Bool {
        let (key, what): (String, String)
        switch error {
        case .addressRefused(let host):
            (key, what) = (host, "the address \(host) leads to is not allowed (see --allow-origin)")
        case .fileRefused(let path):
            let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? path
            (key, what) = ("file:" + folder, "the file is outside the folders imported, or reached through a symbolic link")
        default:
            return false
        }
        if refusalsLogged.withLock({ $0.first(key) }) {
            logger.warning(
                "origin refused: \(what); its pictures get the placeholder (logged once per host)",
                metadata: ["url": "\(url)", "host": "\(key)"])
        }
        return true
    }
}

/// The hosts whose refusal was logged, so each is logged once: at most
/// `capacity` are remembered, then all are forgotten and each is logged once more.
struct RefusalLog {
    static let capacity = 1024
    private var seen: Set<String> = []

    /// Whether `key` is told for the first time (and remembers it).
    mutating func first(_ key: String) -> Bool {
        if seen.count >= Self.capacity { seen.removeAll(keepingCapacity: true) }
        return seen.insert(key).inserted
    }
}
