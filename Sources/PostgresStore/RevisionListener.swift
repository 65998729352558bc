import Foundation
import PostgresWire
import Synchronization

/// Listens for other nodes' writes on a connection and a thread of its own,
/// from its start until `stop()`: each NOTIFY on the revision channel moves
/// the store's revision forward, so every node drops its stale pages within
/// a second. While PostgreSQL is away it reconnects (a pause of 250 ms,
/// doubling to 1 s), and the store's reads fail at once meanwhile.
///
/// A quiet connection is asked `SELECT 1` every 5 s: a server that stopped
/// answering without closing the socket is found within the connect timeout.
final class RevisionListener: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let done = Atomic<Bool>(false)

    /// Starts listening for `store`.
    init(store: PostgresFeedStore) {
        let thread = Thread { [self] in
            listen(for: store)
            done.store(true, ordering: .releasing)
        }
        thread.name = "warmfeed-postgres-listen"
        thread.start()
    }

    /// Asks the thread to end; it sees it within a quarter of a second.
    func stop() { stopping.store(true, ordering: .relaxed) }

    /// Whether the thread has ended.
    var ended: Bool { done.load(ordering: .acquiring) }

    private var stopped: Bool { stopping.load(ordering: .relaxed) }

    /// How long one wait for a notification lasts: how soon `stop()` is seen.
    private static let tick: Duration = .milliseconds(250)
    /// How long a connection may stay quiet before it is asked whether it still answers.
    private static let quietLimit: Duration = .seconds(5)

    private func listen(for store: PostgresFeedStore) {
        var pause: Duration = .milliseconds(250)
        while !stopped {
            do throws(PQProblem) {
                try listenOnce(for: store)
                pause = .milliseconds(250)
            } catch {
                if stopped { break }
                store.noteDown(error, listener: true)
            }
            let until = ContinuousClock.now + pause
            while !stopped, ContinuousClock.now < until { Thread.sleep(forTimeInterval: 0.02) }
            pause = min(pause * 2, .seconds(1))
        }
    }

    /// One listening connection, for as long as it lasts (or until `stop()`).
    private func listenOnce(for store: PostgresFeedStore) throws(PQProblem) {
        let location = store.location
        let connection = try PQConnection(location.libpqParameters(application: "warmfeed-listen"), deadline: .now + location.connectTimeout)
        defer { connection.close() }
        try connection.query("LISTEN \(PostgresSchema.revisionChannel)", until: .now + location.connectTimeout)
        // Listening now: a write made while this node was away shows in the count.
        let rows = try connection.query("SELECT writes FROM feed WHERE id = 1", until: .now + location.connectTimeout)
        if let count = rows.int64(0, 0) { store.heard(writes: Int(count)) }
        store.noteListening()
        var heardFrom = ContinuousClock.now
        while !stopped {
            let arrived = try connection.notifications(until: .now + Self.tick)
            for notification in arrived where notification.channel == PostgresSchema.revisionChannel {
                if let count = Int(notification.payload) { store.heard(writes: count) }
            }
            if !arrived.isEmpty {
                heardFrom = .now
            } else if heardFrom.duration(to: .now) > Self.quietLimit {
                try connection.query("SELECT 1", until: .now + location.connectTimeout)
                heardFrom = .now
            }
        }
    }
}
