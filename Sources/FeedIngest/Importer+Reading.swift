import FeedImport
import Foundation
import Logging
import OriginFetcher
import Reckoning
import Synchronization
import Thumbnailer
import WarmfeedCore
import Workers

/// How an import reads a source: streamed into one transaction, or read
/// into memory for a `GroupWriter` (a poll's small document), building
/// only the entries whose digest is new; and how a feed's own title and
/// site become what its rows show.
extension Importer {
    /// Parsing and writing are synchronous and can take seconds: they run on
    /// a thread for long jobs (`WorkerPool.longJobs`), never on the
    /// cooperative pool the server's handlers share. A poll's small document
    /// (a stamp, no progress asked, at most `GroupWriter.documentLimit` bytes
    /// and `GroupWriter.partLimit` entries) is read into memory and written
    /// with the other polls of its window (`group`); anything else streams
    /// in a transaction of its own.
    func parseOffThread(
        _ work: Work, _ stamp: SourceStamp?, _ report: ImportReport, _ progress: (@Sendable (ImportProgress) -> Void)?,
        _ stop: (@Sendable () -> Bool)?, known: Set<UInt64>? = nil
    ) async throws(ImportError) -> ImportReport {
        logger.debug("importing the source", metadata: ["source": "\(SourceURL.redacted(report.source.description))"])
        if let group, let stamp, progress == nil, case .feed(let input, _) = work, let size = input.size, size <= GroupWriter.documentLimit {
            let read: Result<(ImportReport, GroupWriter.Part), ImportError> = await WorkerPool.longJobs.perform(
                cancelled: .failure(ImportError("the import was cancelled before it began"))
            ) { [self] in
                Result { () throws(ImportError) in try self.collect(work, report, stamp: stamp, known: known ?? []) }
            }
            var (collected, part) = try read.get()
            if part.items.count <= GroupWriter.partLimit {
                collected.written = try await group.write(part).get()
                collected.written.unchanged += collected.entriesKnown
                return collected
            }
        }
        let result: Result<ImportReport, ImportError> = await WorkerPool.longJobs.perform(
            cancelled: .failure(ImportError("the import was cancelled before it began"))
        ) { [self] in
            Result { () throws(ImportError) in try self.parse(work, report, progress, stamp: stamp, stop: stop) }
        }
        return try result.get()
    }

    /// The 64-bit FNV-1a hash of a downloaded file (nil when it cannot be read).
    static func digest(ofFile path: String) -> UInt64? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return data.withUnsafeBytes { FNV1a.hash64($0) }
    }

    /// Reads `work` and writes its entries in one transaction.
    func parse(
        _ work: Work, _ initial: ImportReport, _ progress: (@Sendable (ImportProgress) -> Void)?, stamp: SourceStamp? = nil,
        stop: (@Sendable () -> Bool)? = nil
    ) throws(ImportError) -> ImportReport {
        var report = initial
        let started = ContinuousClock.now
        do {
            let (metadata, written) = try store.write { writer -> FeedMetadata in
                let metadata = try read(work, into: &report, progress, stamp: stamp, stop: stop) { item, keep in
                    try writer.upsert(item, keepStoredDate: keep)
                }
                if let relabel = Self.relabel(metadata, stamp) { try writer.relabelSource(relabel.id, title: relabel.title, link: relabel.link) }
                return metadata
            }
            report.took(metadata)
            report.written = written
        } catch let error as ImportError {
            throw error
        } catch {
            throw ImportError("the store refused the import, so nothing was written: \(error)")
        }
        progress?(ImportProgress(entries: report.entries, elapsed: ContinuousClock.now - started))
        return report
    }

    /// Reads `work` into memory, for a `GroupWriter` to write with others.
    /// Entries whose digest is in `known` are left out (the store has them
    /// as they are); the report's `entryDigests` name every entry read.
    func collect(
        _ work: Work, _ initial: ImportReport, stamp: SourceStamp?, known: Set<UInt64>
    ) throws(ImportError) -> (ImportReport, GroupWriter.Part) {
        var report = initial
        var part = GroupWriter.Part(items: [])
        report.entryDigests = []
        do {
            let metadata = try read(work, into: &report, nil, stamp: stamp, stop: nil, known: known) { item, keep in
                part.items.append((item, keep))
            }
            part.relabel = Self.relabel(metadata, stamp)
            report.took(metadata)
        } catch let error as ImportError {
            throw error
        } catch {
            throw ImportError("cannot read the source: \(error)")
        }
        return (report, part)
    }

    /// Reads every entry of `work` into `upsert`, noting problems and counts in `report`.
    private func read(
        _ work: Work, into report: inout ImportReport, _ progress: (@Sendable (ImportProgress) -> Void)?, stamp: SourceStamp?,
        stop: (@Sendable () -> Bool)?, known: Set<UInt64>? = nil, upsert: (FeedItem, _ keepStoredDate: Bool) throws -> Void
    ) throws -> FeedMetadata {
        let started = ContinuousClock.now
        var lastReport = started
        let nowMillis = Int64(Date().timeIntervalSince1970 * 1000)
        let builder: EntryBuilder
        switch work {
        case .feed(_, let sourceURL): builder = EntryBuilder(sourceURL: sourceURL)
        case .folder: builder = EntryBuilder(allowFileImages: true)
        }
        var counted = report
        defer { report = counted }
        let base: String =
            switch work {
            case .feed(_, let sourceURL): sourceURL
            case .folder(let root): root
            }
        func take(_ raw: RawEntry) throws {
            if counted.entries % 256 == 0, stop?() == true {
                throw ImportError("stopped before the end because the server is shutting down; nothing was written")
            }
            counted.entries += 1
            let digest = known.map { _ in EntryDigest.of(raw, base: base) }
            if let digest, known?.contains(digest) == true {
                counted.entryDigests?.insert(digest)
                counted.entriesKnown += 1
                return
            }
            switch builder.build(raw) {
            case .failure(let problem):
                counted.note(problem)
            case .success(let entry):
                // No usable date: one just below the last that keeps the source's order
                // (first entry newest); an item already stored keeps its own.
                let published = entry.published.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } ?? nowMillis - Int64(counted.entries)
                try upsert(
                    FeedItem(
                        guid: entry.guid, title: entry.title, summary: entry.summary, link: entry.link,
                        imageURL: entry.imageURL, imageWidth: entry.imageWidth, imageHeight: entry.imageHeight,
                        published: published, source: stamp?.id ?? 0, sourceTitle: stamp?.title, sourceLink: stamp?.site
                    ),
                    entry.published == nil
                )
                if let digest { counted.entryDigests?.insert(digest) }
            }
            if let progress, counted.entries % 256 == 0 {
                let now = ContinuousClock.now
                if now - lastReport >= .milliseconds(100) {
                    lastReport = now
                    progress(ImportProgress(entries: counted.entries, elapsed: now - started))
                }
            }
        }
        let note = { (problem: ImportProblem) in counted.note(problem) }
        switch work {
        case .feed(let input, _):
            return try FeedReader.read(input, onEntry: take, onProblem: note)
        case .folder(let root):
            return try ImageFolder.scan(root, facts: facts, onEntry: take, onProblem: note)
        }
    }

    /// The title and site every row of a stamped source must show, when the
    /// feed named itself anew (or for the first time); nil when they stand.
    static func relabel(_ metadata: FeedMetadata, _ stamp: SourceStamp?) -> GroupWriter.Relabel? {
        guard let stamp else { return nil }
        let (title, site) = names(metadata, stamp)
        guard title != stamp.title || site != stamp.site else { return nil }
        return GroupWriter.Relabel(id: stamp.id, title: title, link: site)
    }

    /// The title and site the rows of a stamped source show: the feed's own,
    /// else the list's.
    static func names(_ metadata: FeedMetadata, _ stamp: SourceStamp) -> (title: String?, site: String?) {
        let title = metadata.title.map(displayTitle).flatMap { $0.isEmpty ? nil : $0 } ?? stamp.listedTitle
        let site = metadata.link.flatMap(siteLink) ?? stamp.listedSite
        return (title, site)
    }

    /// `link` when a row may link to it: an absolute http(s) URL.
    static func siteLink(_ link: String) -> String? {
        let trimmed = link.trimmingCharacters(in: .whitespaces)
        let lower = trimmed.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), trimmed.count <= 2048,
            URL(string: trimmed)?.host?.isEmpty == false
        else { return nil }
        return trimmed
    }

    /// A feed's own title, made plain and short for the summary.
    static func displayTitle(_ text: String) -> String {
        let plain = HTMLText.plainText(text)
        return plain.count > 120 ? String(plain.prefix(119)) + "…" : plain
    }
}

extension ImportReport {
    /// Notes what the feed said of itself.
    mutating func took(_ metadata: FeedMetadata) {
        format = metadata.format
        title = metadata.title.map(Importer.displayTitle)
        site = metadata.link.flatMap(Importer.siteLink)
        hints = metadata.hints
    }
}
