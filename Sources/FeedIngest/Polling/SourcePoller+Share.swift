import Logging
import Polling
import WarmfeedCore

/// The share of the polling: which hosts this process polls, among the
/// processes sharing its store (`PollingShare`), and what changes when they do.
extension SourcePoller {
    /// Asks the store for this process's share of the polling. A process
    /// that comes to poll takes the schedule the store kept for its hosts.
    /// When the share changes, what the process knew of the hosts it gives
    /// up is written to the store at once and they are dropped; the hosts
    /// it gains are read from the store one check later (`settling`), once
    /// the process that held them has seen the change too and kept theirs.
    /// A process that does not read the lists reads the sources again when
    /// the one that does has changed them.
    func checkShare(dueNow: Bool = false) async {
        let share = await store.pollingShare()
        let (was, settled) = machine.withLock { machine -> (PollingShare?, Bool) in
            defer { machine.share = share }
            let settled = machine.settling && machine.share == share
            if settled || share != machine.share { machine.settling = false }
            return (machine.share, settled)
        }
        if share == was {
            if settled {
                await applyLists()
            } else if let share, !share.readsLists, let changed = try? await store.note(Self.sourcesChangedNote),
                changed != machine.withLock({ $0.sourcesChanged })
            {
                await applyLists()
            }
            return
        }
        guard let share else {
            logger.info("this server polls no source now: it has no place among the servers sharing the store")
            await keepStates()
            let now = Self.now()
            machine.withLock { machine in
                machine.take(machine.schedule.adopt([], now: now))
                machine.sources = [:]
                machine.entryDigests = [:]
                machine.toStart = []
            }
            return
        }
        logger.info(
            "this server's share of the polling",
            metadata: ["place": "\(share.place)", "servers polling": "\(share.places.count)", "reads the lists": "\(share.readsLists)"])
        guard was != nil else {
            await applyLists(dueNow: dueNow)
            return
        }
        let now = Self.now()
        machine.withLock { machine in
            machine.settling = true
            // The hosts given up: what this process knew of their sources is written with the next keep.
            let kept = machine.sources.filter { share.polls(host: SourceURL.host(of: $0.value.source)) }
            for (id, source) in machine.sources where kept[id] == nil { machine.left[id] = source }
            machine.sources = kept
            machine.entryDigests = machine.entryDigests.filter { machine.sources[$0.key] != nil }
            machine.toStart.removeAll { machine.sources[$0] == nil }
            let resources = machine.sources.map { id, source in
                PollResource(id: id, host: SourceURL.host(of: source.source), state: machine.schedule.state(of: id) ?? source.poll)
            }
            machine.take(machine.schedule.adopt(resources, now: now))
        }
        await keepStates()
    }
}
