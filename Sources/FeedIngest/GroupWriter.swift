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

    /// What to do next: nothing (a write or a window under way will see the
    /// parts), write now, or write when the window `token` names ends.
    enum Next: Equatable {
        case none
        case writeNow
        case writeAfter(token: UInt64)
    }

    /// The parts waiting, and whether a write or a window is under way.
    /// Pure: each event returns what to do.
    struct Window {
        var waiting = 0
        var writing = false
        /// The window running, by its token; windows whose token is not this one are over.
        var timer: UInt64?
        var tokens: UInt64 = 0
        /// Write at once, not a window later (the first pass: the server waits for it).
        var hurry = false
        /// Write at once until nothing waits: a poll waiting was cancelled (shutdown).
        var urgent = false
        let fullAt: Int

        /// A part came.
        mutating func added() -> Next {
            waiting += 1
            return decide()
        }

        /// The window `token` ended.
        mutating func windowEnded(_ token: UInt64) -> Next {
            guard timer == token, !writing else { return .none }
            timer = nil
            writing = true
            return .writeNow
        }

        /// A write took the `taken` parts waiting, and has ended.
        mutating func wrote(_ taken: Int) -> Next {
            waiting -= taken
            writing = false
            if waiting == 0 { urgent = false }
            return decide()
        }

        /// A poll waiting was cancelled: what waits is written as soon as it can be.
        mutating func urged() -> Next {
            if waiting > 0 { urgent = true }
            return decide()
        }

        /// Writes begin now when full or in a hurry; otherwise a window opens.
        mutating func hurried(_ on: Bool) -> Next {
            hurry = on
            return decide()
        }

        private mutating func decide() -> Next {
            guard !writing, waiting > 0 else { return .none }
            if hurry || urgent || waiting >= fullAt {
                timer = nil
                writing = true
                return .writeNow
            }
            if timer != nil { return .none }
            tokens += 1
            timer = tokens
            return .writeAfter(token: tokens)
        }
    }

    private struct State {
        var waiting: [Waiting] = []
        var window: Window
    }

    private let store: any FeedStore
    /// How long the first part of a window waits for others.
    let window: Duration
    private let state: Mutex<State>

    /// Documents larger than this, or with more entries than `partLimit`,
    /// are written on their own, streamed: memory stays bounded.
    static let documentLimit = 1 << 20
    static let partLimit = 2_000

    /// Writes into `store` the parts of each `window`, or at once when
    /// `fullAt` wait.
    init(store: any FeedStore, window: Duration, fullAt: Int = 64) {
        self.store = store
        self.window = window
        state = Mutex(State(window: Window(fullAt: fullAt)))
    }

    /// Writes `part` with the others of its window; what it did alone. A
    /// cancelled caller (the server shutting down) has it written at once,
    /// not a window later, and still hears how it went.
    func write(_ part: Part) async -> Result<UpsertSummary, ImportError> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let next = state.withLock { state in
                    state.waiting.append(Waiting(part: part, continuation: continuation))
                    return state.window.added()
                }
                follow(next)
            }
        } onCancel: {
            follow(state.withLock { $0.window.urged() })
        }
    }

    /// While `on`, parts are written as soon as the write before them ends,
    /// with no window: the first pass, which the server's start waits for.
    func hurry(_ on: Bool) {
        follow(state.withLock { $0.window.hurried(on) })
    }

    private func follow(_ next: Next) {
        switch next {
        case .none: break
        case .writeNow: Task { [self] in await flush() }
        case .writeAfter(let token):
            Task { [self] in
                try? await Task.sleep(for: window)
                follow(state.withLock { $0.window.windowEnded(token) })
            }
        }
    }

    /// Writes every part waiting in one transaction and tells each its summary.
    private func flush() async {
        let parts = state.withLock { state -> [Waiting] in
            defer { state.waiting.removeAll() }
            return state.waiting
        }
        let list = parts.map(\.part)
        do {
            let (summaries, _) = try await store.writeOffPool { writer -> [UpsertSummary] in
                try list.map { part in try Self.write(part, into: &writer) }
            }
            for (waiting, summary) in zip(parts, summaries) { waiting.continuation.resume(returning: .success(summary)) }
        } catch {
            let failure = ImportError("the store refused the import, so nothing was written: \(error)")
            for waiting in parts { waiting.continuation.resume(returning: .failure(failure)) }
        }
        follow(state.withLock { $0.window.wrote(parts.count) })
    }

    /// Writes one part; what it did is the summary's growth meanwhile.
    private static func write(_ part: Part, into writer: inout FeedWriter) throws -> UpsertSummary {
        try writer.settle()
        let before = writer.summary
        for (item, keep) in part.items { try writer.upsert(item, keepStoredDate: keep) }
        if let relabel = part.relabel { try writer.relabelSource(relabel.id, title: relabel.title, link: relabel.link) }
        try writer.settle()
        return writer.summary.since(before)
    }
}
