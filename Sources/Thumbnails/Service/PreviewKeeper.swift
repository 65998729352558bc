import ServiceLifecycle
import Synchronization
import Thumbnailer
import WarmfeedCore

/// Keeps each picture's preview with its item in the store, so it outlives
/// the thumbnail caches and restarts: a page rendered after the thumbnail
/// left every cache still paints each box in its picture's colours.
///
/// Thumbnails note their preview as they are made; the notes are written in
/// one transaction a second (and at shutdown), not one per thumbnail.
package final class PreviewKeeper: Service, Sendable {
    private let store: any FeedStore
    private let pending = Mutex<[Int64: Int64]>([:])
    private let batches = Atomic<Int>(0)

    /// How many batches have been written: a page rendered before the latest
    /// one, with a row then missing its preview, is rendered again.
    package var generation: Int { batches.load(ordering: .acquiring) }
    private let interval: Duration

    package init(store: any FeedStore, interval: Duration = .seconds(1)) {
        self.store = store
        self.interval = interval
    }

    /// Item `id`'s picture has `preview`.
    func note(_ id: Int64, _ preview: ThumbnailPreview) {
        pending.withLock { $0[id] = preview.packed }
    }

    /// Writes what was noted; returns how many.
    @discardableResult
    func flush() async -> Int {
        let batch = pending.withLock { pending in
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
        guard !batch.isEmpty else { return 0 }
        do {
            try await store.setPreviews(batch)
            batches.add(1, ordering: .releasing)
        } catch {
            // Lost previews are made again with the next thumbnail; put these back for the next try.
            pending.withLock { pending in pending.merge(batch) { newer, _ in newer } }
            return 0
        }
        return batch.count
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: self.interval)
                await self.flush()
            }
        }
        await flush()
    }
}
