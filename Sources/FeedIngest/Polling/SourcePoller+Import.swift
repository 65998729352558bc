import FeedImport
import WarmfeedCore

extension SourcePoller {
    /// `warmfeed import SOURCE...`: imports every feed the values name once,
    /// each into its own source, as a poll would (a server polling the same
    /// feed later updates these items, never doubles them, and asks with the
    /// validators kept here). Removes nothing: only a server's lists do.
    public static func importOnce(
        _ specs: [String], importer: Importer, progress: (@Sendable (ImportProgress) -> Void)? = nil
    ) async -> (feeds: [(ListedFeed, Result<ImportReport, ImportError>)], problems: [String]) {
        let lists = SourceSpecs(specs: specs, fetcher: importer.fetcher, workFolder: importer.workFolder, feedLimits: importer.limits)
        let read = await lists.read()
        var done: [(ListedFeed, Result<ImportReport, ImportError>)] = []
        for feed in read.feeds {
            let fetched = lists.takeFirstBody(feed.key)
            done.append((feed, await importOnce(feed, fetched: fetched, importer: importer, progress: read.feeds.count == 1 ? progress : nil)))
        }
        return (done, read.problems)
    }

    private static func importOnce(
        _ feed: ListedFeed, fetched: Importer.FetchedBody?, importer: Importer, progress: (@Sendable (ImportProgress) -> Void)?
    ) async -> Result<ImportReport, ImportError> {
        let store = importer.store
        let kept: (Int64, PolledSource)
        do {
            let stored = try await store.sources().first { $0.key == feed.key }
            if let stored {
                kept = (stored.id, PolledSource.decode(stored.state) ?? PolledSource(key: feed.key, listedBy: nil))
            } else {
                let (id, _) = try await store.writeOffPool { writer in try writer.source(key: feed.key) }
                kept = (id, PolledSource(key: feed.key, listedBy: nil))
            }
        } catch {
            return .failure(ImportError("the store refused the source: \(error)"))
        }
        let id = kept.0
        var source = kept.1
        if source.listedBy == nil { (source.listedTitle, source.listedSite) = (feed.title, feed.site) }
        do throws(ImportError) {
            // Asked for whole, as the operator asked: the summary counts every entry.
            let report = try await importer.run(feed.source, stamp: source.stamp(id: id), fetched: fetched, progress: progress)
            if !report.notModified {
                (source.etag, source.lastModified, source.digest) = (report.validators.etag, report.validators.lastModified, report.digest)
                source.title = report.title ?? source.listedTitle
                source.site = report.site ?? source.listedSite
                source.items += report.written.inserted
            }
            let state = source.encoded
            _ = try? await store.writeOffPool { writer in try writer.keepSource(id, state: state) }
            return .success(report)
        } catch {
            return .failure(error)
        }
    }
}
