import SQLiteStore
import ServiceLifecycle
import WarmfeedCore

/// The store's own long-lived work as a service: hearing of writes made
/// elsewhere (another process on the SQLite file, another node on
/// PostgreSQL) within a second, so no stale page is served; keeping its
/// connections; closing them at shutdown. First in the group, so it stops last.
///
/// Its section of the operator's views says which store answers, and what
/// SQLite holds in memory.
struct StoreService: Service, StatsPublisher {
    let store: any FeedStore

    func run() async throws {
        await store.run()
    }

    func publish(into stats: inout CacheStats) {
        let status = store.status
        (stats.store.backend, stats.store.location) = (status.backend, status.location)
        (stats.store.answering, stats.store.problem) = (status.answering, status.problem)
        stats.store.copy = status.copy
        stats.store.revision = store.revision
        stats.memoryUse.sqliteBytes = SQLiteFeedStore.memoryInUse
    }
}
