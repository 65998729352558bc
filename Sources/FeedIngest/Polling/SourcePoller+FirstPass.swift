import FeedImport
import Foundation
import Logging
import OriginFetcher
import Polling
import Reckoning
import ServiceLifecycle
import Synchronization
import WarmfeedCore

/// The first pass: every source due polled once before the server listens.
extension SourcePoller {
    /// Waits for the first pass's polls to end, stopping those still
    /// running first when `stopping`.
    func endFirstPassPolls(stopping: Bool) async {
        let polls = machine.withLock { machine in
            defer { machine.firstPassPolls = [] }
            return machine.firstPassPolls
        }
        if stopping { for poll in polls { poll.cancel() } }
        for poll in polls { await poll.value }
    }

    /// Polls every source due once, before the server listens: at most
    /// `firstPassLimit` when the values name lists, as long as it takes for
    /// one feed. Returns how each poll ended, in the order they ended. Made
    /// once: a second caller waits for the first's and has its results.
    public func firstPass(progress: (@Sendable (ImportProgress) -> Void)? = nil) async -> [Result<ImportReport, ImportError>] {
        let pass = machine.withLock { machine in
            if let pass = machine.firstPass { return pass }
            let pass = Task { await self.makeFirstPass(progress: progress) }
            machine.firstPass = pass
            return pass
        }
        return await withTaskCancellationHandler {
            await pass.value
        } onCancel: {
            pass.cancel()
        }
    }

    private func makeFirstPass(progress: (@Sendable (ImportProgress) -> Void)?) async -> [Result<ImportReport, ImportError>] {
        // Without --refresh a source is polled at each start (conditionally), whatever its kept schedule says.
        await checkShare(dueNow: configuration.refresh == nil)
        guard machine.withLock({ $0.share != nil }) else { return [] }
        let single = machine.withLock { $0.sources.count == 1 } && configuration.specs.count == 1
        let deadline = single ? nil : ContinuousClock.now + configuration.firstPassLimit
        let reports = Results()
        importer.writeSoon(true)
        defer { importer.writeSoon(false) }
        // Unstructured, so that polls under way at the limit go on (a download cut there is a
        // full download again at the next poll); cancelling the pass stops them.
        await withTaskCancellationHandler {
            while !Task.isCancelled {
                let started = startDue().map { id in
                    Task { [self] in
                        if let result = await poll(id, progress: single ? progress : nil) { reports.list.withLock { $0.append(result) } }
                        bell.ring()
                    }
                }
                machine.withLock { $0.firstPassPolls += started }
                let idle = machine.withLock { machine in
                    let summary = machine.schedule.summary(now: Self.now())
                    return summary.fetching == 0 && summary.waiting == 0 && machine.toStart.isEmpty
                }
                if idle {
                    await endFirstPassPolls(stopping: false)  // each has told the schedule; this waits for its report
                    break
                }
                if let deadline, ContinuousClock.now >= deadline {
                    logger.info("sources still importing after the first pass; the server starts meanwhile")
                    break
                }
                await bell.wait(upTo: .milliseconds(250))
            }
        } onCancel: {
            for poll in machine.withLock({ $0.firstPassPolls }) { poll.cancel() }
        }
        await keepStates()
        return reports.list.withLock { $0 }
    }

    /// How the first pass's polls ended, gathered from its tasks.
    private final class Results: Sendable {
        let list = Mutex<[Result<ImportReport, ImportError>]>([])
    }
}
