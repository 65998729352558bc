import Synchronization
import WarmfeedCore

/// Runs `work`, giving up after `limit` with `StoreUnavailable`: a query to a
/// server that stopped answering must not hold a reader (or a start) for
/// longer than that. The work is then cancelled and left to end on its own (a
/// query that does not see cancellation cannot hold the caller either); when
/// the work ends first, the clock is cancelled, so no timer outlives its query.
func within<Value: Sendable>(
    _ limit: Duration, _ message: String, _ work: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    let race = Race<Value>()
    return try await withCheckedThrowingContinuation { continuation in
        race.wait(continuation)
        let clock = Task {
            try await Task.sleep(for: limit)
            race.finish(with: .failure(StoreUnavailable(message)), timedOut: true)
        }
        let worker = Task {
            let result = await Result { try await work() }
            race.finish(with: result)
            clock.cancel()
        }
        race.onTimeout { worker.cancel() }
    }
}

/// The caller's continuation, resumed once: by the work or by the clock,
/// whichever is first.
private final class Race<Value: Sendable>: Sendable {
    private struct State {
        var waiting: CheckedContinuation<Value, any Error>?
        var timedOut = false
        var cancelWork: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())

    func wait(_ continuation: CheckedContinuation<Value, any Error>) {
        state.withLock { $0.waiting = continuation }
    }

    /// `cancel` runs when the clock wins (at once, if it already has).
    func onTimeout(_ cancel: @escaping @Sendable () -> Void) {
        let already = state.withLock { state -> Bool in
            if state.timedOut { return true }
            state.cancelWork = cancel
            return false
        }
        if already { cancel() }
    }

    func finish(with result: Result<Value, any Error>, timedOut: Bool = false) {
        let (continuation, cancel) = state.withLock { state -> (CheckedContinuation<Value, any Error>?, (@Sendable () -> Void)?) in
            guard let waiting = state.waiting else { return (nil, nil) }
            state.waiting = nil
            if timedOut {
                state.timedOut = true
                return (waiting, state.cancelWork)
            }
            return (waiting, nil)
        }
        cancel?()
        continuation?.resume(with: result)
    }
}

extension Result where Failure == any Error {
    /// The outcome of async `body`.
    init(_ body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
