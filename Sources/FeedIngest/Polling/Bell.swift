import Synchronization

/// Wakes the loops waiting on it: `wait(upTo:)` returns when `ring()` is
/// called (or was, since the last wait), when the time is up, or when the
/// task is cancelled.
final class Bell: Sendable {
    private struct State {
        var rung = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var next = 0
    }

    private let state = Mutex(State())

    /// Wakes every waiter, or the next one to wait.
    func ring() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.waiters.isEmpty else {
                state.rung = true
                return []
            }
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits for a ring, at most `limit`.
    func wait(upTo limit: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                do {
                    try await Task.sleep(for: limit)
                    ring()
                } catch {}
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now = state.withLock { state -> Bool in
                        if state.rung {
                            state.rung = false
                            return true
                        }
                        state.waiters[state.next] = continuation
                        state.next += 1
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                ring()
            }
            group.cancelAll()
        }
    }
}
