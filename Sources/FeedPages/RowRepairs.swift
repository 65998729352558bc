import Synchronization

/// Rows a page found corrupt in the store, waiting to be prepared again.
///
/// A page that reads a corrupt row renders it from its item (the reader sees
/// the right row) and notes its id here; `RowPreparation` takes the ids on
/// its next pass, has the store forget those rows, and renders them again.
/// Its lock is taken only when a page found a corrupt row, never on a good
/// page's path. At most `capacity` ids wait: past that, more are let go
/// until the next pass (their pages, read again, note them again).
package final class RowRepairs: Sendable {
    /// The most ids waiting at once.
    static let capacity = 4096

    private let waiting = Mutex<Set<Int64>>([])

    /// None waiting yet.
    package init() {}

    /// Notes rows found corrupt.
    func note(_ ids: [Int64]) {
        guard !ids.isEmpty else { return }
        waiting.withLock { waiting in
            for id in ids where waiting.count < Self.capacity { waiting.insert(id) }
        }
    }

    /// The ids waiting, in id order; none wait after.
    func take() -> [Int64] {
        waiting.withLock { waiting in
            defer { waiting.removeAll() }
            return waiting.sorted()
        }
    }
}
