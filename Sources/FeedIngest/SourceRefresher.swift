import FeedImport
import Logging
import OriginFetcher
import Reckoning
import ServiceLifecycle
import Synchronization
import WarmfeedCore

/// Keeps the configured source imported: once before the server listens
/// (the app asks), then every `interval` while it runs. A URL is asked with
/// the validators of the last import (kept in the store, so a restart asks
/// with them too), so an unchanged feed costs a 304. New items are
/// announced to `newItems` (the server warms its top pages). A failed import
/// is logged and recorded; the store keeps what it had.
public final class SourceRefresher: Service, StatsPublisher, Sendable {
    public let source: ImportSource
    public let interval: Duration?
    private let importer: Importer
    private let store: any FeedStore
    private let newItems: (@Sendable (_ revision: Int) -> Void)?
    private let logger: Logger
    /// What the imports did, for the admin view.
    private let record: Mutex<RefreshStatus>

    /// Refreshes `source` every `interval` (only at start when nil) through
    /// `importer` into `store`; `newItems` hears the store's revision after
    /// an import that added items.
    public init(
        source: ImportSource, interval: Duration?, importer: Importer, store: any FeedStore,
        newItems: (@Sendable (_ revision: Int) -> Void)?, logger: Logger
    ) {
        self.source = source
        self.interval = interval
        self.importer = importer
        self.store = store
        self.newItems = newItems
        self.logger = logger
        record = Mutex(RefreshStatus(source: "\(source)", refreshSeconds: interval.map(\.inSeconds)))
    }

    /// What the imports did so far.
    public var status: RefreshStatus { record.withLock { $0 } }

    /// The source's section of the operator's views.
    public func publish(into stats: inout CacheStats) {
        stats.source = status
    }

    /// Imports the source every `interval` until shutdown. An import under way
    /// when shutdown comes is stopped and writes nothing (it is one
    /// transaction: it lands whole or not at all); the next start imports again.
    public func run() async throws {
        guard let interval else {
            try? await gracefulShutdown()
            return
        }
        try? await cancelWhenGracefulShutdown { [self] in
            while true {
                try await Task.sleep(for: interval)
                await importIfLeading()
            }
        }
    }

    /// Imports the source unless another server sharing the store polls it
    /// (one node of a cluster does; if it dies, the next to ask takes over).
    @discardableResult
    public func importIfLeading(progress: (@Sendable (ImportProgress) -> Void)? = nil) async -> Result<ImportReport, ImportError>? {
        guard await store.leadsRefresh() else {
            record.withLock { $0.polledElsewhere = true }
            logger.debug("another server polls the source", metadata: ["source": "\(source)"])
            return nil
        }
        record.withLock { $0.polledElsewhere = false }
        return await importOnce(progress: progress)
    }

    /// Imports the source once, logs what it did, and warms the top pages when
    /// new items arrived. Cancelling the calling task stops it, writing nothing.
    @discardableResult
    public func importOnce(progress: (@Sendable (ImportProgress) -> Void)? = nil) async -> Result<ImportReport, ImportError> {
        let stopped = StopFlag()
        return await withTaskCancellationHandler {
            await importOnce(progress: progress, stop: { stopped.isSet })
        } onCancel: {
            stopped.set()
        }
    }

    private func importOnce(progress: (@Sendable (ImportProgress) -> Void)?, stop: @escaping @Sendable () -> Bool) async -> Result<ImportReport, ImportError> {
        logger.info("importing the source", metadata: ["source": "\(source)"])
        do throws(ImportError) {
            let key = "validators \(source)"
            let validators = (try? await store.note(key))?.flatMap(Self.decode) ?? ConditionalRequest()
            let report = try await importer.run(source, validators: validators, progress: progress, stop: stop)
            try? await store.setNote(key, Self.encode(report.validators))
            record.withLock { $0.record(report) }
            if report.notModified {
                logger.info("source not modified", metadata: ["source": "\(source)"])
            } else {
                logger.info(
                    "imported the source",
                    metadata: [
                        "source": "\(source)", "new": "\(report.written.inserted)", "updated": "\(report.written.updated)",
                        "skipped": "\(report.skippedCount)",
                    ])
            }
            if report.written.inserted > 0 { newItems?(store.revision) }
            return .success(report)
        } catch {
            record.withLock { $0.record(error) }
            logger.error("import failed; serving what the store had", metadata: ["source": "\(source)", "reason": "\(error)"])
            return .failure(error)
        }
    }

    /// Validators as one line for the store's notes: "etag\nlast-modified".
    static func encode(_ validators: ConditionalRequest) -> String {
        "\(validators.etag ?? "")\n\(validators.lastModified ?? "")"
    }

    static func decode(_ text: String) -> ConditionalRequest? {
        let parts = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 else { return nil }
        return ConditionalRequest(etag: parts[0].isEmpty ? nil : parts[0], lastModified: parts[1].isEmpty ? nil : parts[1])
    }
}

/// Set once when an import must stop; read from the importing thread.
private final class StopFlag: Sendable {
    private let flag = Atomic(false)
    var isSet: Bool { flag.load(ordering: .relaxed) }
    func set() { flag.store(true, ordering: .relaxed) }
}
