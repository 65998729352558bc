import FeedImport
import Foundation
import Logging
import OriginFetcher
import Polling
import Reckoning
import ServiceLifecycle
import Synchronization
import WarmfeedCore

/// Keeps every configured source in the river: reads the source lists (at
/// start, every `--refresh`, on SIGHUP), adds and removes sources in the
/// store, and polls each source on its own schedule (`PollSchedule`):
/// conditionally, within limits per host and in all, lengthened by the
/// feed's own hints, held by a host's `Retry-After`, backed off when it
/// fails. Processes sharing a store share the polling (`PollingShare`): each
/// host's sources are polled by one of them, so a host's limits and holds
/// are kept in one place; when one comes or goes, the hosts it takes or
/// held move with the schedule the store kept for them.
///
/// The schedule and what the poller knows of each source are one state
/// under one lock; each event runs the schedule under it, and the fetches
/// it asks for start after it.
public final class SourcePoller: Service, StatsPublisher, SourceListing, Sendable {
    public let configuration: SourcesConfiguration
    let lists: SourceSpecs
    let importer: Importer
    let store: any FeedStore
    private let newItems: (@Sendable (_ revision: Int) -> Void)?
    let logger: Logger
    let machine: Mutex<Machine>
    let bell = Bell()
    private let rereadAsked = Atomic(false)

    /// Statuses an answer may have and still come back as a report: the
    /// schedule tells a host's throttling (429, 503) from a source's failure.
    static let passing = Set(400...599)

    struct Machine: Sendable {
        var schedule: PollSchedule
        var sources: [Int64: PolledSource] = [:]
        /// Fetches the schedule asked for, not started yet.
        var toStart: [Int64] = []
        /// When the schedule wants its next tick (ms since 1970).
        var wake: Int64?
        /// Sources whose state changed since it was last written to the store.
        var dirty: Set<Int64> = []
        /// This process's share of the polling; nil: it polls nothing now.
        var share: PollingShare?
        /// The share changed and the hosts it gained are not read yet: they
        /// are, at the next check that finds the same share (the process that
        /// held them has then kept what it knew of them in the store).
        var settling = false
        /// The lists' reader's `sourcesChangedNote` when this process last
        /// read the sources (when another process reads the lists).
        var sourcesChanged: String?
        /// Sources that left this process (its share shrank, or the list
        /// dropped them) while a poll of theirs ran: what the poll learned is
        /// still written to the store, for whoever polls them next.
        var left: [Int64: PolledSource] = [:]
        /// A list value (a list, or a feed URL not known yet) could not be read at the last read.
        var listsUnread = false
        /// List values that read empty last time (see `SourceReconciler`).
        var emptyLists: Set<String> = []
        /// The store's revision after new items, not yet announced.
        var announce: Int?
        var status: RefreshStatus
        var random = SystemRandomNumberGenerator()
        /// The first pass, once begun: whoever asks for it next (the start, the loop) waits for the same one.
        var firstPass: Task<[Result<ImportReport, ImportError>], Never>?
        /// The first pass's polls, which outlive it when it stops waiting at
        /// its limit: they finish in their own time, and shutdown stops them.
        var firstPassPolls: [Task<Void, Never>] = []
        /// Each source's `ImportReport.entryDigests` from its last read whose
        /// items landed: the next read builds only entries not among them.
        /// In memory only: a start, or a new leader, builds every entry once.
        var entryDigests: [Int64: Set<UInt64>] = [:]

        /// Notes what the schedule asked for.
        mutating func take(_ actions: [PollAction]) {
            for action in actions {
                switch action {
                case .fetch(let id): toStart.append(id)
                case .wake(let at): wake = at
                }
            }
        }
    }

    /// Polls the sources `configuration` names into `store` through
    /// `importer`; lists on the web are fetched through `fetcher`.
    /// `newItems` hears the store's revision after polls that added items
    /// (at most once every two seconds).
    public init(
        _ configuration: SourcesConfiguration, importer: Importer, fetcher: OriginFetcher, store: any FeedStore,
        newItems: (@Sendable (_ revision: Int) -> Void)?, logger: Logger
    ) {
        self.configuration = configuration
        self.importer = importer
        self.store = store
        self.newItems = newItems
        self.logger = logger
        lists = SourceSpecs(specs: configuration.specs, fetcher: fetcher, workFolder: importer.workFolder, feedLimits: importer.limits)
        let shown = configuration.specs.count == 1 ? SourceURL.redacted(configuration.specs[0]) : "\(configuration.specs.count) source values"
        machine = Mutex(
            Machine(
                schedule: PollSchedule(rules: configuration.rules),
                status: RefreshStatus(source: shown, refreshSeconds: configuration.refresh.map(\.inSeconds))))
    }

    /// The limits a poll's download runs under: 30 s in all, silence cut
    /// after `Importer.silenceAllowed`.
    public static func pollLimits(maxBytes: Int) -> FetchLimits {
        FetchLimits(connectTimeout: .seconds(5), totalTimeout: .seconds(30), maxBodyBytes: maxBytes, maxRedirects: 3, lowSpeedTime: Importer.silenceAllowed)
    }

    // MARK: - Running

    /// Reads the lists again at the next turn of the loop (SIGHUP).
    public func rereadLists() {
        rereadAsked.store(true, ordering: .relaxed)
        bell.ring()
    }

    /// Polls until shutdown; a poll under way then is stopped and writes
    /// nothing (the next start polls it again). What the polls learned is
    /// written to the store before it returns.
    public func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            // The first pass, unless the start has made it already.
            _ = await firstPass()
            await withDiscardingTaskGroup { group in
                let listsEvery = configuration.refresh ?? .seconds(86_400)
                var listsDue = ContinuousClock.now + listsEvery
                // A value the first pass could not read is read again soon.
                var listsRetry: Duration? = machine.withLock { $0.listsUnread } ? configuration.listRetry : nil
                if let listsRetry { listsDue = ContinuousClock.now + min(listsRetry, listsEvery) }
                var shareDue = ContinuousClock.now
                var keepDue = ContinuousClock.now + configuration.keepEvery
                var announceDue = ContinuousClock.now
                while !Task.isCancelled {
                    let now = ContinuousClock.now
                    if now >= shareDue {
                        await checkShare()
                        shareDue = now + .seconds(5)
                    }
                    if rereadAsked.exchange(false, ordering: .relaxed) || now >= listsDue {
                        // A value that could not be read (a list, or a feed URL not known yet) is read
                        // again after `listRetry`, then twice as long each time, up to the lists' own interval.
                        await applyLists()
                        if !machine.withLock({ $0.listsUnread }) {
                            listsRetry = nil
                            listsDue = now + listsEvery
                        } else {
                            let wait = min(listsRetry.map { $0 * 2 } ?? configuration.listRetry, listsEvery)
                            listsRetry = wait
                            listsDue = now + wait
                        }
                    }
                    if now >= keepDue {
                        await keepStates()
                        keepDue = now + configuration.keepEvery
                    }
                    let announced = machine.withLock { machine -> Int? in
                        guard now >= announceDue else { return nil }
                        defer { machine.announce = nil }
                        return machine.announce
                    }
                    if let revision = announced {
                        newItems?(revision)
                        announceDue = now + .seconds(2)
                    }
                    guard !Task.isCancelled else { break }
                    for id in startDue() {
                        group.addTask { [self] in
                            await poll(id)
                            bell.ring()
                        }
                    }
                    await bell.wait(upTo: waitLimit())
                }
            }
        }
        await endFirstPassPolls(stopping: true)
        await keepStates()
    }

    /// How long the loop may sleep: until the schedule's next tick, at most a second.
    private func waitLimit() -> Duration {
        let now = Self.now()
        let wake = machine.withLock { $0.wake }
        guard let wake else { return .seconds(1) }
        return .milliseconds(max(0, min(1000, wake - now)))
    }

    /// Ticks the schedule and takes the fetches it starts.
    func startDue() -> [Int64] {
        let now = Self.now()
        return machine.withLock { machine in
            guard machine.share != nil else { return [] }
            if let wake = machine.wake, wake <= now {
                machine.wake = nil
            }
            machine.take(machine.schedule.tick(now: now))
            defer { machine.toStart.removeAll() }
            return machine.toStart
        }
    }

    // MARK: - A poll

    /// Polls the source `id` once and tells the schedule how it ended; nil
    /// when the source left the list meanwhile.
    @discardableResult
    func poll(_ id: Int64, progress: (@Sendable (ImportProgress) -> Void)? = nil) async -> Result<ImportReport, ImportError>? {
        guard let source = machine.withLock({ $0.sources[id] }) else {
            let now = Self.now()
            machine.withLock { machine in machine.take(machine.schedule.finished(id, .busy, now: now, random: &machine.random)) }
            return nil
        }
        let outcome: PollOutcome
        var report: ImportReport?
        var failure: ImportError?
        let known = machine.withLock { $0.entryDigests[id] }
        do throws(ImportError) {
            let done = try await importer.run(
                source.source, validators: source.validators, lastDigest: source.digest, stamp: source.stamp(id: id), passing: Self.passing,
                fetched: lists.takeFirstBody(source.key), addresses: source.namedOnTheWeb ? configuration.listedOnTheWeb : nil,
                answered: { [self] in
                    // The connection is done: its slots go to other sources while the items are written.
                    let now = Self.now()
                    machine.withLock { machine in machine.take(machine.schedule.answered(id, now: now)) }
                    bell.ring()
                }, knownEntries: known, progress: progress)
            report = done
            if let status = done.status, status >= 400 {
                if status == 429 || status == 503 {
                    // Retry-After in seconds from the answer, to the millisecond of its receipt.
                    let wait = done.freshness?.retryAt(receivedAt: done.receivedAt).map { ($0 - done.receivedAt) * 1000 }
                    outcome = .throttled(status: status, retryAt: wait.map { done.receivedAtMillis + $0 })
                } else {
                    outcome = .failed("answered \(status)", status: status)
                }
            } else {
                let freshFor = done.freshness?.freshFor(receivedAt: done.receivedAt).map { Int64($0) * 1000 }
                var hinted = source
                if !done.notModified {
                    (hinted.ttlMinutes, hinted.skipHours, hinted.skipDays) = (done.hints.ttlMinutes, done.hints.skipHours, done.hints.skipDays)
                }
                outcome = done.notModified ? .unchanged(hinted.hints(freshFor: freshFor)) : .changed(hinted.hints(freshFor: freshFor))
            }
        } catch {
            failure = error
            outcome = Task.isCancelled ? .busy : .failed(error.description, status: nil)
        }
        let now = Self.now()
        let revision = store.revision
        machine.withLock { machine in
            machine.take(machine.schedule.finished(id, outcome, now: now, random: &machine.random))
            guard var kept = machine.sources[id] else {
                // It left while polled: what the poll learned is for whoever polls it next.
                var left = source
                Self.record(outcome, report: report, failure: failure, into: &left, status: &machine.status, at: now)
                machine.left[id] = left
                return
            }
            if let state = machine.schedule.state(of: id) { kept.poll = state }
            Self.record(outcome, report: report, failure: failure, into: &kept, status: &machine.status, at: now)
            machine.sources[id] = kept
            machine.dirty.insert(id)
            switch outcome {
            case .changed, .unchanged: if let report, !report.notModified { machine.entryDigests[id] = report.entryDigests }
            case .failed, .busy: machine.entryDigests[id] = nil
            default: break
            }
            if let report, report.written.changedItems { machine.announce = revision }
        }
        if let report, !report.notModified, !report.refused {
            logger.debug(
                "polled a source",
                metadata: ["source": "\(SourceURL.redacted(source.key))", "new": "\(report.written.inserted)", "updated": "\(report.written.updated)"])
        } else if let failure {
            logger.info("a source failed", metadata: ["source": "\(SourceURL.redacted(source.key))", "reason": "\(failure)"])
        }
        if let report { return .success(report) }
        return failure.map { .failure($0) }
    }

    /// What a poll's end changes in what the poller keeps of its source, and in the totals.
    private static func record(
        _ outcome: PollOutcome, report: ImportReport?, failure: ImportError?, into source: inout PolledSource, status: inout RefreshStatus, at now: Int64
    ) {
        if let report {
            source.bytesLast = report.bytes
            source.bytesTotal += report.bytes
            status.bytes += report.bytes
        }
        switch outcome {
        case .changed:
            guard let report else { return }
            status.imports += 1
            (source.etag, source.lastModified, source.digest) = (report.validators.etag, report.validators.lastModified, report.digest)
            (source.ttlMinutes, source.skipHours, source.skipDays) = (report.hints.ttlMinutes, report.hints.skipHours, report.hints.skipDays)
            let names = report.title.map { ($0.isEmpty ? nil : $0, report.site) }
            source.title = names?.0 ?? source.listedTitle
            source.site = report.site ?? source.listedSite
            source.items += report.written.inserted
            source.lastResult = "\(report.written.inserted) new, \(report.written.updated) updated"
            status.lastImportAt = iso(now)
            (status.lastInserted, status.lastUpdated, status.lastProblems) = (report.written.inserted, report.written.updated, report.skippedCount)
            status.lastError = nil
        case .unchanged:
            status.imports += 1
            status.notModified += 1
            if let report { (source.etag, source.lastModified) = (report.validators.etag, report.validators.lastModified) }
            source.lastResult = "not modified"
        case .throttled(let code, _):
            status.throttled += 1
            source.lastResult = "\(code): held until the host's Retry-After"
        case .failed(let reason, _):
            status.failures += 1
            status.lastError = "\(SourceURL.redacted(source.key)): \(reason)"
            source.lastResult = reason
        case .busy, .polledElsewhere:
            break
        }
    }

    /// Writes what the polls learned (validators, schedules) to the store, in one transaction.
    func keepStates() async {
        let dirty = machine.withLock { machine -> [(Int64, String)] in
            defer { (machine.dirty, machine.left) = ([], [:]) }
            return machine.dirty.compactMap { id in machine.sources[id].map { (id, $0.encoded) } } + machine.left.map { ($0.key, $0.value.encoded) }
        }
        guard !dirty.isEmpty else { return }
        do {
            _ = try await store.writeOffPool { writer in
                for (id, state) in dirty { try writer.keepSource(id, state: state) }
            }
        } catch {
            // Kept for the next try: a store down for a while loses no validator.
            machine.withLock { machine in
                for (id, state) in dirty {
                    if machine.sources[id] != nil {
                        machine.dirty.insert(id)
                    } else if let left = PolledSource.decode(state) {
                        machine.left[id] = machine.left[id] ?? left
                    }
                }
            }
            logger.warning("cannot keep the sources' state in the store", metadata: ["reason": "\(error)"])
        }
    }

    // MARK: - Helpers

    /// Now, in milliseconds since 1970 (the schedule's clock: hints and holds are wall-clock times).
    static func now() -> Int64 {
        Int64(Date().timeIntervalSince1970 * 1000)
    }

    /// A time in ISO 8601, UTC, to the second.
    static func iso(_ millis: Int64) -> String {
        CivilDate.iso8601(milliseconds: millis)
    }

    /// Validators as one line for the store's notes: "etag\nlast-modified".
    static func encodeValidators(_ validators: ConditionalRequest) -> String {
        "\(validators.etag ?? "")\n\(validators.lastModified ?? "")"
    }

    static func decodeValidators(_ text: String) -> ConditionalRequest? {
        let parts = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 else { return nil }
        return ConditionalRequest(etag: parts[0].isEmpty ? nil : parts[0], lastModified: parts[1].isEmpty ? nil : parts[1])
    }
}
