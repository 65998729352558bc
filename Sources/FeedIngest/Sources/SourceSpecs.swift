import FeedImport
import Foundation
import OriginFetcher
import Synchronization

/// Reads the `--source` values into the feeds they name. A value is a feed
/// (a URL, a file, a folder) or a list of feeds (OPML, or one a line), in a
/// file or at a URL; which, is told from the document's first bytes. A list
/// file is read again when its size or time changed, a list URL asked with
/// its validators; a URL found to be a feed is not asked again: the poller
/// polls it, and its first poll reads the body fetched to tell
/// (`takeFirstBody`), so a new feed URL costs one request, not two.
public final class SourceSpecs: Sendable {
    /// The `--source` values, in order.
    public let specs: [String]
    private let fetcher: OriginFetcher
    private let workFolder: URL
    private let limits: FetchLimits
    /// The limits a URL not known yet is fetched under: a list's or a feed's.
    private let unknownLimits: FetchLimits
    /// Bodies of URLs found to be feeds, kept for their first poll.
    private let firstBodies: Mutex<[String: Importer.FetchedBody]>
    /// What each value was found to be last time, so an unchanged list is not read again.
    private let known: Mutex<[String: Known]>

    private enum Known {
        case feed(ListedFeed)
        case list(stamp: String, feeds: [ListedFeed], problems: [String])
    }

    /// What one read of every value found.
    public struct Read: Sendable {
        /// Every feed named, once each (the first value naming one lists it).
        public var feeds: [ListedFeed] = []
        /// Values that could not be read this time: the feeds they named before stay.
        public var failed: Set<String> = []
        /// Entries skipped and values not read, in an operator's words.
        public var problems: [String] = []
    }

    /// Reads `specs`; lists on the web are fetched through `fetcher` into
    /// `workFolder`, under `limits`; a URL not known yet may be a feed, and
    /// is fetched under `feedLimits` where they allow more.
    public init(
        specs: [String], fetcher: OriginFetcher, workFolder: URL, limits: FetchLimits = SourceSpecs.listLimits,
        feedLimits: FetchLimits = Importer.feedLimits
    ) {
        self.specs = specs
        self.fetcher = fetcher
        self.workFolder = workFolder
        self.limits = limits
        var either = limits
        either.maxBodyBytes = max(limits.maxBodyBytes, feedLimits.maxBodyBytes)
        either.totalTimeout = max(limits.totalTimeout, feedLimits.totalTimeout)
        unknownLimits = either
        known = Mutex([:])
        firstBodies = Mutex([:])
    }

    deinit {
        for body in firstBodies.withLock({ $0.values }) { try? FileManager.default.removeItem(atPath: body.file) }
    }

    /// The body fetched for the feed `key` when its URL was told to be a
    /// feed, once: its first poll reads it instead of asking again.
    public func takeFirstBody(_ key: String) -> Importer.FetchedBody? {
        firstBodies.withLock { $0.removeValue(forKey: key) }
    }

    /// A list is small: 8 MiB, 30 seconds (`Importer.silenceAllowed` of them silent), 3 redirects.
    public static var listLimits: FetchLimits {
        FetchLimits(
            connectTimeout: .seconds(5), totalTimeout: .seconds(30), maxBodyBytes: SourceList.documentLimit, maxRedirects: 3,
            lowSpeedTime: Importer.silenceAllowed)
    }

    /// Reads every value; a URL in `knownFeeds` (a source the store keeps)
    /// is a feed, and is not fetched to tell.
    public func read(knownFeeds: Set<String> = []) async -> Read {
        var result = Read()
        var seen: Set<String> = []
        for spec in specs {
            switch await read(spec, knownFeeds: knownFeeds) {
            case .success(let (feeds, problems)):
                for feed in feeds where seen.insert(feed.key).inserted { result.feeds.append(feed) }
                result.problems += problems.map { "\(SourceURL.redacted(spec)): \($0)" }
            case .failure(let error):
                result.failed.insert(spec)
                result.problems.append("\(SourceURL.redacted(spec)): \(error.description)")
            }
        }
        return result
    }

    private func read(_ spec: String, knownFeeds: Set<String>) async -> Result<([ListedFeed], [String]), ImportError> {
        let source: ImportSource
        do {
            source = try ImportSource(spec)
        } catch {
            return .failure(error)
        }
        switch source {
        case .folder:
            return .success(([ListedFeed(source: source, listedBy: spec)], []))
        case .file(let path):
            let stamp = Self.stamp(ofFile: path)
            if let stamp, case .list(stamp, let feeds, let problems)? = known.withLock({ $0[spec] }) { return .success((feeds, problems)) }
            return Self.readList(.file(path), base: .file(path), spec: spec).map { list in
                if let stamp, let list { known.withLock { $0[spec] = .list(stamp: stamp, feeds: list.0, problems: list.1) } }
                return list ?? ([ListedFeed(source: source, listedBy: spec)], [])
            }
        case .url(let url):
            if knownFeeds.contains(url), known.withLock({ $0[spec] }) == nil { known.withLock { $0[spec] = .feed(ListedFeed(source: source, listedBy: spec)) } }
            switch known.withLock({ $0[spec] }) {
            case .feed(let feed)?: return .success(([feed], []))
            case .list(let stamp, let feeds, let problems)?: return await fetchList(url, spec: spec, stamp: stamp, known: (feeds, problems))
            case nil: return await fetchList(url, spec: spec, stamp: nil, known: nil)
            }
        }
    }

    /// Fetches the list at `url` (with the validators of the last fetch in
    /// `stamp`); a feed found there is remembered as one.
    private func fetchList(_ url: String, spec: String, stamp: String?, known held: ([ListedFeed], [String])?) async -> Result<
        ([ListedFeed], [String]), ImportError
    > {
        try? FileManager.default.createDirectory(at: workFolder, withIntermediateDirectories: true)
        let file = workFolder.appendingPathComponent("list-\(UInt64.random(in: 0...UInt64.max)).download").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let validators = stamp.flatMap(SourcePoller.decodeValidators) ?? ConditionalRequest()
        let download: Download
        do {
            download = try await fetcher.download(
                url, to: file, conditional: validators, headers: Importer.requestHeaders, limits: held == nil ? unknownLimits : limits)
        } catch {
            return .failure(ImportError(Importer.explain(error, url: url)))
        }
        if download.notModified, let held { return .success(held) }
        let feed = ListedFeed(source: .url(url), listedBy: spec)
        return Self.readList(.file(file), base: .url(download.finalURL), spec: spec).map { list in
            guard let list else {
                known.withLock { $0[spec] = .feed(feed) }
                // Kept for the feed's first poll, under a name the deferred removal does not know.
                let kept = workFolder.appendingPathComponent("first-\(UInt64.random(in: 0...UInt64.max)).download").path
                if (try? FileManager.default.moveItem(atPath: file, toPath: kept)) != nil {
                    let body = Importer.FetchedBody(file: kept, download: download)
                    if let old = firstBodies.withLock({ $0.updateValue(body, forKey: feed.key) }) {
                        try? FileManager.default.removeItem(atPath: old.file)
                    }
                }
                return ([feed], [])
            }
            let kept = SourcePoller.encodeValidators(ConditionalRequest(etag: download.etag, lastModified: download.lastModified))
            known.withLock { $0[spec] = .list(stamp: kept, feeds: list.0, problems: list.1) }
            return list
        }
    }

    /// Reads `input` as a list: its feeds and problems, or nil when it is a feed.
    private static func readList(_ input: FeedInput, base: SourceListBase, spec: String) -> Result<([ListedFeed], [String])?, ImportError> {
        do {
            let list = try SourceList.read(input, base: base)
            guard list.kind != .feed else { return .success(nil) }
            let feeds = list.sources.map { listed in
                ListedFeed(source: Self.source(listed.location), title: listed.title, site: listed.site, listedBy: spec)
            }
            return .success((feeds, list.problems.map(\.description)))
        } catch {
            // Not a list (nor anything `sniff` knows): a feed, for the feed readers to judge.
            if error.description.hasPrefix("neither a feed nor a list") { return .success(nil) }
            return .failure(error)
        }
    }

    /// A listed location as a source: a URL, or a path (a folder when it is
    /// one; a file otherwise, even one not there yet: its polls fail until it is).
    static func source(_ location: String) -> ImportSource {
        if location.hasPrefix("/") {
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: location, isDirectory: &isFolder) && isFolder.boolValue
                ? .folder(location) : .file(location)
        }
        return .url(location)
    }

    /// A file's size and modification time, which tell that it changed.
    static func stamp(ofFile path: String) -> String? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
        return "\((attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0):\(attributes[.size] as? Int ?? 0)"
    }
}
