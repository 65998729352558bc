import Dispatch
import Synchronization
import WarmfeedCore

/// `warmfeed copy-store FROM TO`: moves a feed between stores (SQLite to
/// PostgreSQL when one machine is no longer enough, and back), in one
/// transaction on the target. Items keep their ids, ranks and previews, and
/// the target takes the source's epoch, so links and cursors readers hold
/// stay valid. The target must be empty: a copy never merges two feeds.
public enum StoreCopy {
    /// Why a copy did not start or did not finish (the target is as it was).
    public struct Failure: Error, CustomStringConvertible {
        /// What happened, in an operator's words.
        public var description: String
    }

    /// Copies every item of `source` into the empty `target`; returns how many.
    /// `progress` is called a few times a second from the copying thread.
    public static func copy(
        from source: any FeedStore, to target: any FeedStore, batch: Int = 1000,
        progress: (@Sendable (ImportProgress) -> Void)? = nil
    ) async throws -> Int {
        let held = try await target.count()
        guard held == 0 else {
            throw Failure(description: "the target already holds \(held) items; copy-store fills an empty store (nothing was written)")
        }
        let total = try await source.count()
        let epoch = source.epoch
        let sources = try await source.sources()
        let started = ContinuousClock.now
        let (copied, _) = try await target.writeOffPool { writer -> Int in
            try writer.adoptEpoch(epoch)
            // The sources first, with their ids: the items carry them, and a poll
            // after the copy finds its source and its validators.
            for entry in sources { try writer.insertSourceCopy(entry) }
            var copied = 0
            var request = PageRequest.number(1)
            var lastReport = started
            while true {
                let asked = request
                guard let page = try waitFor({ try await source.page(asked, size: batch) }), !page.items.isEmpty else { break }
                for item in page.items { try writer.insertCopy(item) }
                copied += page.items.count
                let now = ContinuousClock.now
                if now - lastReport >= .milliseconds(100) {
                    lastReport = now
                    progress?(ImportProgress(entries: copied, elapsed: now - started, total: total))
                }
                guard let older = page.older else { break }
                request = .after(older)
            }
            progress?(ImportProgress(entries: copied, elapsed: ContinuousClock.now - started, total: total))
            return copied
        }
        // The folders of images the items were imported from: their pictures are read beneath them only.
        try await ImportedFolders.copy(from: source, to: target)
        return copied
    }

    /// Waits on this thread (one of the copy's own, never the cooperative
    /// pool's) for an async read of the source store.
    private static func waitFor<Value: Sendable>(_ read: @escaping @Sendable () async throws -> Value) throws -> Value {
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<Value, any Error>?>(nil)
        Task {
            let result: Result<Value, any Error>
            do { result = .success(try await read()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }
}
