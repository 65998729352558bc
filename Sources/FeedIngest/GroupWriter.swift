import FeedImport
import Synchronization
import WarmfeedCore

/// Writes the items of many small polls in one transaction: what a write
/// costs beyond its items (ranks made dense from the oldest item touched,
/// the page index rewritten from there, the journal's pages and its sync) is
/// paid once a window, not once a changed feed. A thousand sources whose
/// new items fall a minute apart would otherwise renumber the newest
/// thousand ranks for each feed.
///
/// A part is written whole or not at all with the others of its window: a
/// store that refuses the transaction fails every poll in it, and each is
/// asked again on its own schedule.
final class GroupWriter: Sendable {
    /// One poll's items and how its rows are labelled.
    struct Part: Sendable {
        var items: [(item: FeedItem, keepStoredDate: Bool)]
        /// The source's new title and site, when the feed named itself anew.
        var relabel: Relabel?
    }

    /// The title and site every row of a source shows from now on.
    struct Relabel: Sendable {
        var id: Int64
        var title: String?
        var link: String?
    }

    private struct Waiting {
        var part: Part
        var continuation: CheckedContinuation<Result<UpsertSummary, ImportError>, Never>
    }

    private struct State {
        var waiting: [Waiting] = []
        var flushing = false
    }

    private let store: any FeedStore
    /// How long the first part of a window waits for others.
    let window: Duration
    /// A window this full is written at once.
    let fullAt: Int
    private let state = Mutex(State())

    /// Documents larger than this, or with more entries than `partLimit`,
    /// are written on their own, streamed: memory stays bounded.
    static let documentLimit = 1 << 20
    static let partLimit = 2_000

    init(store: any FeedStore, window: Duration = .milliseconds(1000), fullAt: Int = 64) {
        self.store = store
        self.window = window
        self.fullAt = fullAt
    }

    /// Writes `part` with the others of its window; what it did alone.
    func write(_ part: Part) async -> Result<UpsertSummary, ImportError> {
        await withCheckedContinuation { continuation in
            let (startTimer, flushNow) = state.withLock { state -> (Bool, Bool) in
                state.waiting.append(Waiting(part: part, continuation: continuation))
                let first = state.waiting.count == 1 && !state.flushing
                if first { state.flushing = true }
                return (first, state.waiting.count == fullAt)
            }
            if startTimer {
                Task { [self] in
                    try? await Task.sleep(for: window)
                    await flush()
                }
            } else if flushNow {
                Task { [self] in await flush() }
            }
        }
    }

    /// Writes every part waiting in one transaction and tells each its summary.
    private func flush() async {
        let parts = state.withLock { state -> [Waiting] in
            defer { state.waiting.removeAll() }
            return state.waiting
        }
        if !parts.isEmpty {
            let written: Result<[UpsertSummary], any Error>
            do {
                let list = parts.map(\.part)
                let (summaries, _) = try await store.writeOffPool { writer -> [UpsertSummary] in
                    try list.map { part in try Self.write(part, into: &writer) }
                }
                written = .success(summaries)
            } catch {
                written = .failure(error)
            }
            switch written {
            case .success(let summaries):
                for (waiting, summary) in zip(parts, summaries) { waiting.continuation.resume(returning: .success(summary)) }
            case .failure(let error):
                let failure = ImportError("the store refused the import, so nothing was written: \(error)")
                for waiting in parts { waiting.continuation.resume(returning: .failure(failure)) }
            }
        }
        // Parts that came while this one was written make the next window; its timer starts now.
        let again = state.withLock { state -> Bool in
            state.flushing = !state.waiting.isEmpty
            return state.flushing
        }
        if again {
            Task { [self] in
                try? await Task.sleep(for: window)
                await flush()
            }
        }
    }

    /// Writes one part; what it did is the summary's growth meanwhile.
    private static func write(_ part: Part, into writer: inout FeedWriter) throws -> UpsertSummary {
        try writer.settle()
        let before = writer.summary
        for (item, keep) in part.items { try writer.upsert(item, keepStoredDate: keep) }
        if let relabel = part.relabel { try writer.relabelSource(relabel.id, title: relabel.title, link: relabel.link) }
        try writer.settle()
        let after = writer.summary
        var summary = UpsertSummary()
        summary.inserted = after.inserted - before.inserted
        summary.updated = after.updated - before.updated
        summary.unchanged = after.unchanged - before.unchanged
        summary.repeated = after.repeated - before.repeated
        summary.removed = after.removed - before.removed
        summary.relabelled = after.relabelled - before.relabelled
        return summary
    }
}
