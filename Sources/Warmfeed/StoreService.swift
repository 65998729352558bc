import ServiceLifecycle
import WarmfeedCore

/// The store's own long-lived work as a service: hearing of writes made
/// elsewhere (another process on the SQLite file, another node on
/// PostgreSQL) within a second, so no stale page is served; keeping its
/// connections; closing them at shutdown. First in the group, so it stops last.
struct StoreService: Service {
    let store: any FeedStore

    func run() async throws {
        await store.run()
    }
}
