/// Exit tests (`#expect(processExitsWith:)`) one at a time in the whole test
/// process. Swift Testing waits for an exit test's child by reading the child's
/// back channel on a cooperative thread, which it holds for the child's whole
/// run: a debug child parsing 50 MB takes a minute on a loaded machine, and
/// three at once held both of a two-core machine's cooperative threads, so
/// every async test in the process stopped (a watchdog then ended the run).
/// In turn, they hold one at most; waiting for a turn holds none.
public actor ExitTestTurns {
    public static let shared = ExitTestTurns()
    private var running = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    private func take() async {
        if !running {
            running = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func give() {
        if waiting.isEmpty { running = false } else { waiting.removeFirst().resume() }
    }

    /// Runs `body` (an exit test) once no other exit test runs.
    public static func inTurn<T>(_ body: () async throws -> T) async rethrows -> T {
        await shared.take()
        do {
            let result = try await body()
            await shared.give()
            return result
        } catch {
            await shared.give()
            throw error
        }
    }
}
