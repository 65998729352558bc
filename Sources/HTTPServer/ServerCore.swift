import Glibc
import HTTPTypes
import Logging
import Synchronization

/// The part of the server the event loop's workers reach: the handler, the
/// threads its async work runs on, and what is kept about connections and
/// requests.
///
/// What it keeps is kept per worker thread (`WorkerShard`): a request locks
/// only its own worker's shard, which no other worker takes, so the request
/// path shares no lock between threads (one table for all of them was the lock
/// every request waited on at 8 threads: all of the futex calls of warm pages).
final class ServerCore: Sendable {
    let configuration: HTTPServerConfiguration
    let handler: Router.Handler
    let logger: Logger
    /// Where `.later` work runs: one executor per handler thread, each
    /// worker handing its work to its own share of them in turn (see `WorkerShard.nextHandler`).
    let executors: [HandlerExecutor]
    /// One per worker thread.
    let shards: [WorkerShard]
    let started = ContinuousClock.now

    init(configuration: HTTPServerConfiguration, handler: @escaping Router.Handler, logger: Logger) {
        self.configuration = configuration
        self.handler = handler
        self.logger = logger
        executors = (0..<max(1, configuration.handlerThreads)).map { HandlerExecutor(name: "warmfeed-handler-\($0)") }
        // Each worker enforces its share of the limits.
        let count = max(1, configuration.threads)
        func share(_ limit: Int) -> Int { (max(1, limit) + count - 1) / count }
        let limits = ConnectionTable.Limits(
            connections: share(configuration.connectionLimit),
            perAddress: share(configuration.connectionsPerAddress),
            headTimeout: .seconds(max(1, configuration.headTimeout))
        )
        // Waits hold their connection: at most half the connections wait, so the
        // rest always hold one a newcomer can take; an address as many as it may
        // hold connections. Half of those (as first built) shed nine in ten of the
        // 512-connection mix's thumbnails: a closed-loop crowd from one address
        // (or behind one proxy) has a request waiting on almost every connection,
        // and waits of connections its client closed stay until their work ends.
        let waits = SuspendedWaits.Limits(
            total: share(configuration.connectionLimit / 2), perAddress: share(configuration.connectionsPerAddress))
        // Worker w takes handlers w, w + count, …: no handler's queue is fed by
        // two workers (with fewer handlers than workers, they share by remainder).
        shards = (0..<count).map { [executors] worker in
            let own = executors.count >= count ? executors.indices.filter { $0 % count == worker } : [worker % executors.count]
            return WorkerShard(limits: limits, waits: waits, handlers: own.map { executors[$0] })
        }
    }

    /// Lets every handler thread finish its queued jobs and exit.
    func stopHandlers() {
        for executor in executors { executor.stop() }
    }

    /// Requests between their request line and the last byte of their answer,
    /// over every worker; shutdown waits for these, so a response just handed
    /// over is still sent.
    var requestsInFlight: Int {
        shards.reduce(0) { $0 + $1.requestsInFlight.load(ordering: .acquiring) }
    }

    // MARK: - Connections

    /// The open files the process needs for its connections: the limit, room
    /// for connections shut down but not yet closed by their worker (so shedding
    /// never blocks an accept), and 256 for the rest of the process.
    var openFilesNeeded: Int {
        let limit = max(1, configuration.connectionLimit)
        return limit + max(64, limit / 8) + 256
    }

    /// Shuts down every connection whose head is overdue, called about twice a
    /// second: with a 408 when a head had begun to arrive, silently when the
    /// connection was idle. An unasked 408 on an idle keep-alive connection
    /// would be read as the answer to the next request a client sends on it
    /// (libcurl 7.88 does), so only a head that began gets one (RFC 9112 §9.5).
    func expireSlowHeads() {
        let now = ContinuousClock.now - started
        for shard in shards {
            shard.connections.withLock { table in
                let (slow, idle) = table.expire(at: now) { overdue in
                    overdue.began || RawSocket.receivedData(on: overdue.socket, within: overdue.waited, sinceAnAnswer: !overdue.first)
                }
                for socket in slow { RawSocket.send(RawSocket.requestTimeout, to: socket) }
                RawSocket.shutDown(slow + idle)
            }
        }
    }

    /// Every worker's counts, summed.
    var connectionCounts: ConnectionCounts {
        var sum = ConnectionCounts()
        for shard in shards {
            shard.connections.withLock { table in
                sum.held += table.held
                sum.slowHeads += table.counts.timedOut
                sum.idleClosed += table.counts.idleClosed
                sum.madeRoom += table.counts.crowdedOut
                sum.refused += table.counts.refused
                sum.malformed += table.counts.malformed
            }
            shard.suspended.withLock { suspended in
                sum.waiting += suspended.waits.count
                sum.waitsShed += suspended.waits.counts.shed
                sum.waitsLate += suspended.waits.counts.late
            }
        }
        return sum
    }
}
