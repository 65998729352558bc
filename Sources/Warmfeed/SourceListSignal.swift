import FeedIngest
import ServiceLifecycle
import UnixSignals

/// Reads the source lists again on SIGHUP, as daemons reread their
/// configuration. `warmfeed serve` ignores SIGHUP from its first line (its
/// default action ends the process), and the signal is trapped when the app
/// is made, before the server listens: a SIGHUP sent once the address is
/// printed is never lost, whenever this service starts to read them.
struct SourceListSignal: Service {
    let poller: SourcePoller
    let signals: UnixSignalsSequence

    /// Traps SIGHUP for `poller`.
    static func trapping(for poller: SourcePoller) async -> SourceListSignal {
        SourceListSignal(poller: poller, signals: await UnixSignalsSequence(trapping: .sighup))
    }

    func run() async throws {
        for await _ in signals.cancelOnGracefulShutdown() {
            poller.rereadLists()
        }
    }
}
