import ServiceLifecycle
import WarmfeedCore

/// Notices writes another process made to the store (`warmfeed import` on a
/// running server's data folder) within a second, so no stale page is served.
struct RevisionWatcher: Service {
    let store: any FeedStore
    var interval: Duration = .seconds(1)

    func run() async throws {
        store.noticeOtherWriters()
        try? await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: interval)
                store.noticeOtherWriters()
            }
        }
    }
}
