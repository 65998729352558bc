import FeedImport
import Logging
import OriginFetcher
import Polling
import WarmfeedCore

/// The lists: what a read of them adds to and removes from the store, and the schedule they make.
extension SourcePoller {
    /// The note the lists' reader moves each time it adds or removes
    /// sources: the other processes sharing the store read the sources again.
    static let sourcesChangedNote = "sources changed"

    /// Reads the lists and makes the store's sources agree: feeds newly
    /// listed are added, sources taken out of a list removed with their
    /// items. Only the process whose share reads the lists does; the others
    /// read the sources it wrote. Then the schedule holds every listed source
    /// on the hosts of this process's share.
    /// With `dueNow`, every source is polled at once, whatever its kept schedule says.
    func applyLists(dueNow: Bool = false) async {
        guard let share = machine.withLock({ $0.share }) else { return }
        // Read before the sources: a change written between is seen at the next check.
        let changed = share.readsLists ? nil : try? await store.note(Self.sourcesChangedNote)
        let stored: [SourceEntry]
        do {
            stored = try await store.sources()
        } catch {
            logger.warning("cannot read the sources from the store; polling what was known", metadata: ["reason": "\(error)"])
            return
        }
        var kept: [Int64: PolledSource] = [:]
        for entry in stored { kept[entry.id] = PolledSource.decode(entry.state) ?? PolledSource(key: entry.key, listedBy: nil) }
        // Which stored sources the lists name now; nil when another process reads them.
        var listed: Listed?
        if share.readsLists {
            guard let read = await readLists(stored: stored, kept: &kept) else { return }
            listed = read
        }
        let now = Self.now()
        machine.withLock { machine in
            if listed == nil { machine.sourcesChanged = changed }
            guard let share = machine.share else { return }
            var polled: [Int64: PolledSource] = [:]
            for (id, stored) in kept {
                var source = machine.sources[id] ?? stored
                if let listed {
                    if let feed = listed.feeds[source.key] {
                        (source.listedBy, source.listedTitle, source.listedSite) = (feed.listedBy, feed.title, feed.site)
                    } else if !(source.listedBy.map(listed.failed.contains) ?? false) {
                        continue
                    }
                } else if source.listedBy == nil {
                    continue  // `warmfeed import` wrote it, and no list names it
                }
                guard share.polls(host: SourceURL.host(of: source.source)) else { continue }
                polled[id] = source
            }
            machine.sources = polled
            // A source that left (and may come back, its items gone) is built whole next time.
            machine.entryDigests = machine.entryDigests.filter { polled[$0.key] != nil }
            let resources = polled.map { id, source in
                var state = source.poll
                if dueNow { state.nextPollAt = nil }
                return PollResource(id: id, host: SourceURL.host(of: source.source), state: state)
            }
            machine.take(machine.schedule.adopt(resources, now: now))
        }
        bell.ring()
    }

    /// What a read of the lists found: the feeds they name by key, and the
    /// values that could not be read (their sources stay polled).
    struct Listed {
        var feeds: [String: ListedFeed]
        var failed: Set<String>
    }

    /// Reads the lists and writes what they change to the store (`kept`
    /// follows); nil when the store refused the change.
    private func readLists(stored: [SourceEntry], kept: inout [Int64: PolledSource]) async -> Listed? {
        // A URL the store keeps as a source is a feed: it is not asked again to tell.
        let read = await lists.read(knownFeeds: Set(stored.map(\.key)))
        let emptyBefore = machine.withLock { $0.emptyLists }
        let plan = SourceReconciler.plan(
            stored: stored.map { SourceReconciler.Stored(id: $0.id, key: $0.key, listedBy: kept[$0.id]?.listedBy) },
            read: read, specs: configuration.specs, emptyBefore: emptyBefore)
        // A data folder from before sources: its items were the one source's whose validators it noted.
        var legacy: (key: String, validators: ConditionalRequest)?
        if stored.isEmpty, configuration.specs.count == 1, read.feeds.count == 1, let feed = read.feeds.first,
            feed.key == (try? ImportSource(configuration.specs[0]))?.description,
            let note = try? await store.note("validators \(feed.key)")
        {
            legacy = (feed.key, Self.decodeValidators(note) ?? ConditionalRequest())
        }
        if !plan.add.isEmpty || !plan.remove.isEmpty {
            let legacy = legacy
            do {
                let (added, summary) = try await store.writeOffPool { writer -> [(Int64, PolledSource)] in
                    for id in plan.remove { try writer.removeSource(id) }
                    return try plan.add.map { feed in
                        var source = PolledSource(key: feed.key, listedBy: feed.listedBy)
                        (source.listedTitle, source.listedSite) = (feed.title, feed.site)
                        let id = try writer.source(key: feed.key)
                        if let legacy {
                            // Its items, ids and ranks stay; the next poll asks with the validators it noted.
                            try writer.relabelSource(id, title: nil, link: nil, adoptingUnsourced: true)
                            (source.etag, source.lastModified) = (legacy.validators.etag, legacy.validators.lastModified)
                        }
                        try writer.keepSource(id, state: source.encoded)
                        return (id, source)
                    }
                }
                for (id, source) in added { kept[id] = source }
                for id in plan.remove { kept[id] = nil }
                if !plan.add.isEmpty { logger.info("sources added", metadata: ["count": "\(plan.add.count)"]) }
                if !plan.remove.isEmpty {
                    logger.info("sources taken out of the river", metadata: ["count": "\(plan.remove.count)", "items": "\(summary.removed)"])
                }
                machine.withLock { machine in
                    machine.status.added += plan.add.count
                    machine.status.removed += plan.remove.count
                    if summary.changedItems { machine.announce = store.revision }
                }
                if let legacy { try? await store.setNote("validators \(legacy.key)", nil) }
                // The processes sharing the store poll the new sources on their hosts.
                try? await store.setNote(Self.sourcesChangedNote, "\(Self.now())")
            } catch {
                logger.error("cannot write the source list's changes; polling what was known", metadata: ["reason": "\(error)"])
                return nil
            }
        }
        for problem in read.problems { logger.warning("source list", metadata: ["problem": "\(problem)"]) }
        machine.withLock { machine in
            machine.listsUnread = !read.failed.isEmpty
            machine.emptyLists = plan.emptyNow
            machine.status.listReads += 1
            machine.status.listProblems += read.problems.count
            if let last = read.problems.last { machine.status.listLastProblem = last }
        }
        // Polled: every listed feed, and the sources of lists that could not be read this time.
        return Listed(feeds: Dictionary(read.feeds.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first }), failed: read.failed)
    }

}
