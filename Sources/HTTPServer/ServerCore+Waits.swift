import HTTPTypes

/// Waits: a connection suspended while its handler's work runs, within the
/// shard's caps and deadlines (`SuspendedWaits`), and resumed with its answer.
extension ServerCore {
    /// The answer of a `.waiting` reply whose wait is shed: its handler said nothing for that case.
    static let shedAnswer = Answer.response(
        .plain(503, "too many requests are waiting; try again shortly", headers: [HTTPField(name: .retryAfter, value: "1")]))

    /// Enters a wait in `shard`'s table and starts its work on a handler
    /// thread; the wait ends with `resume`, called once, by its work, by the
    /// caps or deadline that cut it short, or by shutdown.
    func wait(
        in shard: WorkerShard, address: UInt32, deadline: Duration?, otherwise: Answer, resume: @escaping @Sendable (Answer) -> Void,
        _ work: @escaping @Sendable () async -> Answer
    ) {
        let now = ContinuousClock.now - started
        // Each wait its own number, never the context's identity: the work of a wait
        // cut short may end after its context is freed and another made in its place.
        let (id, shed) = shard.suspended.withLock { suspended in
            let id = suspended.waits.nextID()
            suspended.entries[id] = Suspensions.Entry(resume: resume, otherwise: otherwise)
            return (id, suspended.waits.began(id, address: address, deadline: deadline.map { now + $0 }))
        }
        let task = Task(executorPreference: shard.nextHandler()) {
            let response = await work()
            Self.resume(id, in: shard, with: response)
        }
        // Kept to be cancelled if the wait is cut short: an entry already gone needs none.
        shard.suspended.withLock { $0.entries[id]?.work = task }
        for victim in shed { Self.cutShort(victim, in: shard) }
    }

    /// Hands `response` to the suspended connection of context `id` and resumes
    /// it, unless its wait was cut short or shutdown already answered it.
    private static func resume(_ id: SuspendedWaits.ID, in shard: WorkerShard, with response: Answer) {
        guard let entry = shard.suspended.withLock({ $0.take(id) }) else { return }
        entry.resume(response)
    }

    /// Answers the wait of `id` with what its handler gave for a wait cut
    /// short, and cancels its work (which goes on for whoever else waits on it).
    private static func cutShort(_ id: SuspendedWaits.ID, in shard: WorkerShard) {
        // `SuspendedWaits` let go of it already; the entry is taken here, or by its work if it just ended.
        guard let entry = shard.suspended.withLock({ $0.entries.removeValue(forKey: id) }) else { return }
        entry.work?.cancel()
        entry.resume(entry.otherwise)
    }

    /// Answers every wait past its deadline (see `SuspendedWaits`), called with the head sweep.
    func expireLateWaits() {
        let now = ContinuousClock.now - started
        for shard in shards {
            for late in shard.suspended.withLock({ $0.waits.expire(at: now) }) { Self.cutShort(late, in: shard) }
        }
    }

    /// Answers every connection still waiting on a handler with 503, so the
    /// loop can stop with every request answered. Returns how many there were.
    func answerWaitingConnections() -> Int {
        let waiting = shards.flatMap { shard in
            shard.suspended.withLock { suspended in
                defer {
                    for id in suspended.entries.keys { suspended.waits.ended(id) }
                    suspended.entries.removeAll()
                }
                return Array(suspended.entries.values)
            }
        }
        for entry in waiting { entry.resume(.response(.plain(503, "the server is shutting down; try again shortly"))) }
        return waiting.count
    }
}
