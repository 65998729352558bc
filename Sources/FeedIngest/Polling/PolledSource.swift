import FeedImport
import Foundation
import OriginFetcher
import Polling

/// What the poller keeps of a source: in memory while it runs, and in the
/// store (`SourceEntry.state`, as JSON) across restarts and for the node
/// that polls next. Validators are written only after the items they
/// describe have landed, so a crash between the two costs one full download,
/// never a lost item.
struct PolledSource: Codable, Equatable, Sendable {
    /// The store's key: the URL or path.
    var key: String
    /// The `--source` value that lists it (nil: `warmfeed import` wrote it).
    var listedBy: String?
    /// What the list calls it, and the site it gives.
    var listedTitle: String?
    var listedSite: String?
    /// What its rows show: the feed's own title and site once read.
    var title: String?
    var site: String?
    /// The validators and body hash of the last answer whose items landed.
    var etag: String?
    var lastModified: String?
    var digest: UInt64?
    /// What the feed says of how often to ask it (RSS `ttl`, `skipHours`, `skipDays`), from its last read.
    var ttlMinutes: Int?
    var skipHours: Set<Int> = []
    var skipDays: Set<Int> = []
    /// Its schedule.
    var poll = PollState()
    /// Items it brought into the river (counted by the polls), and bytes downloaded.
    var items = 0
    var bytesLast = 0
    var bytesTotal = 0
    /// The last poll's result in an operator's words.
    var lastResult: String?

    init(key: String, listedBy: String?) {
        self.key = key
        self.listedBy = listedBy
    }

    /// Where it is.
    var source: ImportSource { SourceSpecs.source(key) }

    /// Whether a list on the web names it (rather than the operator, in a
    /// `--source` value or a list file): its URL is then someone else's word.
    /// Told from the text alone (as `ImportSource` reads a URL value): a poll
    /// asks this, and a list file's path must not cost a look at the disk.
    var namedOnTheWeb: Bool {
        guard let listedBy else { return false }
        let value = listedBy.trimmingCharacters(in: .whitespaces)
        return ImportSource.isWebAddress(value) && key != value
    }

    /// The validators to send.
    var validators: ConditionalRequest { ConditionalRequest(etag: etag, lastModified: lastModified) }

    /// How its items are marked.
    func stamp(id: Int64) -> SourceStamp {
        SourceStamp(id: id, title: title, site: site, listedTitle: listedTitle, listedSite: listedSite)
    }

    /// Its hints for the schedule, with the answer's freshness (`freshFor`, ms).
    func hints(freshFor: Int64?) -> PollHints {
        PollHints(freshFor: freshFor, ttl: ttlMinutes.map { Int64($0) * 60_000 }, skipHours: skipHours, skipDays: skipDays)
    }

    /// The state as the store keeps it.
    var encoded: String {
        (try? String(decoding: JSONEncoder().encode(self), as: UTF8.self)) ?? "{}"
    }

    /// The state the store kept, or nil when it cannot be read (a fresh one is made).
    static func decode(_ text: String?) -> PolledSource? {
        guard let text else { return nil }
        return try? JSONDecoder().decode(PolledSource.self, from: Data(text.utf8))
    }
}
