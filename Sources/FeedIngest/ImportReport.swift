import FeedImport
import Foundation
import OriginFetcher
import Reckoning
import WarmfeedCore

/// What an import did, for the summary at its end and the refresh loop's log.
public struct ImportReport: Sendable {
    /// The source imported.
    public var source: ImportSource
    /// The format found (nil when the source was not modified).
    public var format: FeedFormat?
    /// The feed's own title, when it has one.
    public var title: String?
    /// The feed's own site (its home page), when it names one a row may link to.
    public var site: String?
    /// What the feed says of how often to ask it (RSS `ttl`, `skipHours`, `skipDays`).
    public var hints = FeedHints()
    /// A URL's final HTTP status (nil for files and folders).
    public var status: Int?
    /// What the answer's headers say of its freshness and of when to ask again.
    public var freshness: ResponseFreshness?
    /// When the answer was received, in seconds since 1970, and in milliseconds.
    public var receivedAt: Int64 = 0
    public var receivedAtMillis: Int64 = 0
    /// The bytes downloaded.
    public var bytes = 0
    /// The downloaded body's 64-bit FNV-1a hash: a body equal to the last is
    /// neither read nor written, for servers that send no validators.
    public var digest: UInt64?
    /// The answer's status was one the caller asked to have back (429, 503):
    /// nothing was read, and `freshness` says when to ask again.
    public var refused: Bool { status.map { $0 >= 400 } ?? false }
    /// True when the source answered 304 Not Modified: nothing was read.
    public var notModified = false
    /// What the store did.
    public var written = UpsertSummary()
    /// Entries read from the source (written, unchanged or skipped).
    public var entries = 0
    /// The digests of the entries this read found in the store as they are
    /// (written, or known unchanged): given back to the next read of the
    /// source, its entries with these digests are not built again. Nil when
    /// the source was not read that way (a large document, streamed).
    public var entryDigests: Set<UInt64>?
    /// Entries left unbuilt this read: their digests were the last read's.
    public var entriesKnown = 0
    /// Problems by reason, in the order first seen, with the first lines they occurred on.
    public var skipped: [(reason: String, count: Int, lines: [Int])] = []
    /// The validators to send on the next import: a URL's `ETag` and
    /// `Last-Modified`, a file's size and modification time.
    public var validators = ConditionalRequest()
    /// How long it took.
    public var elapsed: Duration = .zero

    /// Problems reported: entries not written, and stretches of the source not read.
    public var skippedCount: Int { skipped.reduce(0) { $0 + $1.count } }

    /// Distinct reasons kept; past them, problems are counted under one more.
    static let reasonsKept = 50

    mutating func note(_ problem: ImportProblem) {
        var problem = problem
        if skipped.count >= Self.reasonsKept, !skipped.contains(where: { $0.reason == problem.reason }) {
            // A source with a million different complaints must not make a million-line report.
            problem.reason = "other problems"
        }
        if let index = skipped.firstIndex(where: { $0.reason == problem.reason }) {
            skipped[index].count += 1
            if let line = problem.line, skipped[index].lines.count < 5 { skipped[index].lines.append(line) }
        } else {
            skipped.append((problem.reason, 1, problem.line.map { [$0] } ?? []))
        }
    }

    /// The summary shown at the end of `warmfeed import`, one line each.
    public var summaryLines: [String] {
        if let status, status >= 400 { return ["\(source): answered \(status); nothing was read."] }
        if notModified { return ["\(source): not modified since the last import; nothing to do."] }
        let seconds = elapsed.inSeconds
        let rate = seconds > 0 ? Int((Double(entries) / seconds).rounded()) : entries
        var lines = [
            "\(source) (\(format?.rawValue ?? "?")\(title.map { ": \($0)" } ?? "")):",
            "  imported \(written.inserted), updated \(written.updated), unchanged \(written.unchanged)"
                + " in \(String(format: "%.1f", seconds)) s (\(rate) entries/s)",
        ]
        if written.repeated > 0 { lines.append("  \(written.repeated) entries repeated an id already read; the later one was kept") }
        if skippedCount > 0 {
            lines.append("  \(skippedCount) problem\(skippedCount == 1 ? "" : "s") in the source; what each names was skipped:")
        }
        for group in skipped.prefix(10) {
            let at =
                group.lines.isEmpty
                ? ""
                : " (line\(group.lines.count > 1 ? "s" : "") \(group.lines.map(String.init).joined(separator: ", "))\(group.count > group.lines.count ? ", …" : ""))"
            lines.append("    \(group.count) × \(group.reason)\(at)")
        }
        if skipped.count > 10 { lines.append("    … and \(skipped.count - 10) other reasons") }
        return lines
    }
}
