import Synchronization

/// Holds the first visitors' requests for page 1 while the server warms it at
/// start, so the very first screen anyone sees has its thumbnails: answering
/// a few hundred milliseconds later beats painting boxes blank for as long.
///
/// It is open unless the server warms page 1 at start (`close()`, before it
/// listens); it opens once page 1 is warm, or after `limit` whatever happens
/// (a dead origin delays the first page by that much at most, once), and
/// never closes again. Other pages and thumbnails are never held.
package final class StartGate: Sendable {
    private struct State {
        var open = true
        var waiting: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextTicket = 0
    }

    private let state = Mutex(State())
    /// `state.open`, read by every request for page 1 without the lock (written
    /// under it, twice in a process's life).
    private let opened = Atomic<Bool>(true)
    let limit: Duration

    package init(limit: Duration) { self.limit = limit }

    package var isOpen: Bool { opened.load(ordering: .acquiring) }

    /// Holds page 1 from now until `open()` (called once, at start).
    package func close() {
        state.withLock {
            $0.open = false
            opened.store(false, ordering: .releasing)
        }
    }

    /// Lets everyone through, now and from now on.
    package func open() {
        let waiting = state.withLock { state in
            state.open = true
            opened.store(true, ordering: .releasing)
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Returns once the gate is open, or when the task is cancelled.
    func pass() async {
        let ticket = state.withLock { state -> Int? in
            guard !state.open else { return nil }
            state.nextTicket += 1
            return state.nextTicket
        }
        guard let ticket else { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.open || Task.isCancelled { return true }
                    state.waiting[ticket] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { $0.waiting.removeValue(forKey: ticket) }
            continuation?.resume()
        }
    }

    /// Returns once the gate is open or `limit` has passed, whichever comes
    /// first (each request keeps its own clock, whatever else is running).
    func passWithinLimit() async {
        guard !isOpen else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: self.limit) }
            group.addTask { await self.pass() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Opens the gate after `limit`; returns as soon as it is open (run once, at start).
    package func openAfterLimit() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: self.limit) }
            group.addTask { await self.pass() }
            await group.next()
            group.cancelAll()
        }
        open()
    }
}
