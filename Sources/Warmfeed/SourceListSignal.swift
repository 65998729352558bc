import FeedIngest
import ServiceLifecycle
import UnixSignals

/// Reads the source lists again on SIGHUP, as daemons reread their
/// configuration. `warmfeed serve` ignores SIGHUP from its first line (its
/// default action ends the process), so one that arrives during the start is
/// harmless; from when this service runs, each one rereads.
struct SourceListSignal: Service {
    let poller: SourcePoller

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            poller.rereadLists()
        }
    }
}
