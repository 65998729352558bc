import OriginFetcher
import Synchronization

/// One fetch per original at a time. An item's 1x and 2x are made side by
/// side (pre-warm runs a few thumbnails at once, a reader's browser asks for
/// both), and both need the same original: the second joins the fetch the
/// first started instead of fetching it again.
final class OriginalFetches: Sendable {
    typealias Fetched = Result<[UInt8], FetchError>

    private let flights = Mutex([Int64: Task<Fetched, Never>]())

    /// The original of item `id`: the fetch in flight for it, or `fetch`, started now.
    func original(of id: Int64, fetch: @escaping @Sendable () async -> Fetched) async -> Fetched {
        let task = flights.withLock { flights -> Task<Fetched, Never> in
            if let running = flights[id] { return running }
            // Unstructured, so the fetch serves every waiter even if the one that started it goes away.
            let task = Task { await fetch() }
            flights[id] = task
            return task
        }
        let result = await task.value
        flights.withLock { flights in
            if flights[id] == task { flights[id] = nil }
        }
        return result
    }
}
