import Synchronization
import WarmfeedCore

/// Runs `work`, giving up after `limit` with `StoreUnavailable`: a query to a
/// server that stopped answering must not hold a reader (or a start) for
/// longer than that. The work is cancelled, and left to end on its own: a
/// query that does not see cancellation cannot hold the caller either.
func within<Value: Sendable>(
    _ limit: Duration, _ message: String, _ work: @escaping @Sendable () async throws -> Value
) async throws -> Value {

    let outcome = Outcome<Value>()
    return try await withCheckedThrowingContinuation { continuation in
        outcome.wait(continuation)
        let task = Task {
            let result = await Result { try await work() }
            outcome.take()?.resume(with: result)
        }
        Task {
            try? await Task.sleep(for: limit)
            guard let waiting = outcome.take() else { return }
            task.cancel()
            waiting.resume(throwing: StoreUnavailable(message))
        }
    }
}

/// The caller's continuation, resumed once: by the work or by the clock, whichever is first.
private final class Outcome<Value: Sendable>: Sendable {
    private let waiting = Mutex<CheckedContinuation<Value, any Error>?>(nil)

    func wait(_ continuation: CheckedContinuation<Value, any Error>) {
        waiting.withLock { $0 = continuation }
    }

    func take() -> CheckedContinuation<Value, any Error>? {
        waiting.withLock { $0.take() }
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
