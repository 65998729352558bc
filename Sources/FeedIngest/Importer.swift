import FeedImport
import Foundation
import Logging
import OriginFetcher
import Reckoning
import Synchronization
import Thumbnailer
import WarmfeedCore
import Workers

/// Brings a source into the store: downloads it (conditionally) when it is a
/// URL, streams it through its format's parser, and writes every entry in one
/// transaction, so a failed import leaves the store as it was while the
/// server keeps serving the previous state.
public final class Importer: Sendable {
    let store: any FeedStore
    let fetcher: OriginFetcher
    /// Where downloads land while they are read.
    let workFolder: URL
    /// The limits a feed download runs under.
    let limits: FetchLimits
    /// Reads an image file's size and time (libvips, header only).
    let facts: @Sendable (String) -> ImageFacts?
    /// Says, at debug, when a source's entries start to be read.
    let logger = Logger(label: "warmfeed.import")
    /// Writes polls' small documents together (nil: each in its own transaction).
    let group: GroupWriter?

    /// An importer writing into `store`; downloads go to `workFolder`. With
    /// a `writeWindow`, polls' small documents are written together, one
    /// transaction a window (`GroupWriter`).
    public init(
        store: any FeedStore, fetcher: OriginFetcher, workFolder: URL, limits: FetchLimits = Importer.feedLimits, writeWindow: Duration? = nil
    ) {
        self.store = store
        group = writeWindow.map { GroupWriter(store: store, window: $0) }
        self.fetcher = fetcher
        self.workFolder = workFolder
        self.limits = limits
        facts = { path in
            Thumbnailer.facts(ofFile: path).map { ImageFacts(width: $0.width, height: $0.height, taken: $0.taken) }
        }
    }

    /// While `on`, polls' documents are written as soon as the write before
    /// them ends, not a window later: a start waits for its first pass.
    func writeSoon(_ on: Bool) {
        group?.hurry(on)
    }

    /// Feeds may be large and slow, but not endless: 512 MiB, a minute, 3
    /// redirects, and `silenceAllowed` to begin.
    public static var feedLimits: FetchLimits {
        FetchLimits(connectTimeout: .seconds(5), totalTimeout: .seconds(60), maxBodyBytes: 512 << 20, maxRedirects: 3, lowSpeedTime: silenceAllowed)
    }

    /// How long a feed or a list may send nothing (or under 1 KiB/s) before
    /// it is cut: 15 s, not the 3 s an image gets, for many feeds are made
    /// on request and a busy blog takes seconds to begin.
    public static let silenceAllowed: Duration = .seconds(15)

    /// What the importer asks for: feeds first, anything else accepted (many
    /// serve RSS as text/xml). The `User-Agent` is the fetcher's own, the one
    /// every fetch sends (`OriginFetcher.userAgent`).
    static let requestHeaders = [
        (
            "Accept",
            "application/feed+json, application/json;q=0.9, application/rss+xml, application/atom+xml, application/rdf+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5"
        )
    ]

    /// Imports `source`. For a URL, `validators` from the last import make an
    /// unchanged source answer 304 and nothing is read; so does a body whose
    /// hash is `lastDigest` (a server that sends no validators). With a
    /// `stamp`, the items belong to that source and their rows name it. A
    /// final status in `passing` (429, 503) comes back in the report, not as
    /// an error, with its `Retry-After`. `progress` is called a few times a
    /// second from the importing thread. When `stop` says so (the server is
    /// shutting down), the import ends early and writes nothing; cancelling
    /// the calling task stops a download. A URL's body `fetched` already
    /// (to tell a feed from a list) is read from there, not asked for again.
    /// `addresses` narrows where a URL may be fetched (a URL someone else
    /// wrote). `answered` hears when a URL's answer is in, before it is read.
    /// Entries whose digests are in `knownEntries` (the last read's
    /// `entryDigests`) are counted unchanged and not built again.
    public func run(
        _ source: ImportSource, validators: ConditionalRequest = .init(), lastDigest: UInt64? = nil, stamp: SourceStamp? = nil,
        passing: Set<Int> = [], fetched: FetchedBody? = nil, addresses: AddressPolicy? = nil, answered: (@Sendable () -> Void)? = nil,
        knownEntries: Set<UInt64>? = nil, progress: (@Sendable (ImportProgress) -> Void)? = nil,
        stop: (@Sendable () -> Bool)? = nil
    ) async throws(ImportError) -> ImportReport {
        let start = ContinuousClock.now
        var report = ImportReport(source: source)
        switch source {
        case .file(let path):
            // A file's validator is its size and modification time: an unchanged file is not read again.
            let fileStamp = SourceSpecs.stamp(ofFile: path)
            if let fileStamp, fileStamp == validators.lastModified {
                report.notModified = true
                report.validators = validators
            } else {
                report = try await parseOffThread(
                    .feed(.file(path), sourceURL: URL(fileURLWithPath: path).absoluteString), stamp, report, progress, stop, known: knownEntries)
                report.validators = ConditionalRequest(lastModified: fileStamp)
            }
        case .folder(let path):
            // Before any item: the server reads a file for a thumbnail only beneath a folder recorded.
            do {
                try await ImportedFolders.record(path, in: store)
            } catch {
                throw ImportError("cannot record the folder in the store: \(error)")
            }
            report = try await parseOffThread(.folder(path), stamp, report, progress, stop)
        case .url(let url):
            try? FileManager.default.createDirectory(at: workFolder, withIntermediateDirectories: true)
            let file = fetched?.file ?? workFolder.appendingPathComponent("source-\(UInt64.random(in: 0...UInt64.max)).download").path
            defer { try? FileManager.default.removeItem(atPath: file) }
            let download: Download
            if let fetched {
                download = fetched.download
            } else {
                var limits = limits
                if let addresses { limits.addressPolicy = addresses }
                do {
                    download = try await fetcher.download(
                        url, to: file,
                        conditional: validators,
                        headers: Self.requestHeaders, limits: limits, passing: passing
                    )
                } catch {
                    throw ImportError(Self.explain(error, url: url))
                }
            }
            answered?()
            report.status = download.status
            report.freshness = download.freshness
            report.receivedAtMillis = Int64(Date().timeIntervalSince1970 * 1000)
            report.receivedAt = report.receivedAtMillis / 1000
            report.bytes = download.bytes
            if passing.contains(download.status) {
                report.validators = validators
            } else if download.notModified {
                report.notModified = true
                report.validators = validators
                report.digest = lastDigest
            } else {
                let digest = Self.digest(ofFile: file)
                report.digest = digest
                if let digest, digest == lastDigest {
                    report.notModified = true
                } else {
                    report = try await parseOffThread(
                        .feed(.file(file), sourceURL: download.finalURL), stamp, report, progress, stop, known: knownEntries)
                }
                report.validators = Self.keepable(ConditionalRequest(etag: download.etag, lastModified: download.lastModified))
            }
        }
        report.elapsed = ContinuousClock.now - start
        return report
    }

    /// The longest validator kept: a feed's `ETag` is sent back on every
    /// poll and kept in the store, so one of 100 KB is dropped (the body's
    /// hash still tells an unchanged feed).
    static let validatorLimit = 1024

    /// `validators`, without one longer than `validatorLimit`.
    static func keepable(_ validators: ConditionalRequest) -> ConditionalRequest {
        ConditionalRequest(
            etag: validators.etag.flatMap { $0.utf8.count <= validatorLimit ? $0 : nil },
            lastModified: validators.lastModified.flatMap { $0.utf8.count <= validatorLimit ? $0 : nil })
    }

    /// A URL's body already downloaded, and what its answer said.
    public struct FetchedBody: Sendable {
        /// The file the body is in; the import removes it.
        public var file: String
        public var download: Download
    }

    enum Work: Sendable {
        case feed(FeedInput, sourceURL: String)
        case folder(String)
    }

    /// A fetch failure in an operator's words.
    static func explain(_ error: FetchError, url: String) -> String {
        switch error {
        case .invalidURL: "not a URL libcurl can read: \(url)"
        case .schemeNotAllowed: "only http and https sources can be fetched: \(url)"
        case .timedOut: "\(url) timed out"
        case .tooLarge: "\(url) is larger than \(feedLimits.maxBodyBytes >> 20) MiB"
        case .tooManyRedirects: "\(url) redirects too many times (or in a loop)"
        case .httpStatus(let status): "\(url) answered \(status)"
        case .connectionFailed(let reason): "could not fetch \(url): \(reason)"
        case .invalidResponse(let reason): "\(url) did not answer HTTP: \(reason)"
        case .cancelled: "the fetch of \(url) was cancelled"
        default: "could not fetch \(url): \(error)"
        }
    }
}

extension Importer {
    /// Lets go of the store (a standalone importer's, before the command ends).
    public func close() async {
        await store.close()
    }
}
