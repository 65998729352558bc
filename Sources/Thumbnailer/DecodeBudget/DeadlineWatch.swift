/// The deadlines of the libvips work running now, with no threads, no locks
/// and no clock (`now` is passed in): which work is past its deadline, and
/// when to look again. ``WorkDeadlines`` holds one under its lock and stops
/// the work it names.
///
/// Work past its deadline is named again at every later look, every
/// `repeatEvery`, until it ends: libvips clears an image's kill flag when it
/// reads it, and a read whose failure goes unheeded would let the work go on.
struct DeadlineWatch {
    typealias Instant = ContinuousClock.Instant

    private var deadlines: [UInt64: Instant] = [:]
    private var expired: Set<UInt64> = []
    private var nextID: UInt64 = 1
    /// How often work past its deadline is stopped again while it runs.
    let repeatEvery: Duration

    init(repeatEvery: Duration = .milliseconds(20)) {
        self.repeatEvery = repeatEvery
    }

    /// Work being watched now.
    var count: Int { deadlines.count }

    /// Watches work that must end by `deadline`: answers its id, and whether
    /// it is past its deadline already (then it is to be stopped at once).
    mutating func add(deadline: Instant, now: Instant) -> (id: UInt64, due: Bool) {
        let id = nextID
        nextID += 1
        deadlines[id] = deadline
        guard deadline <= now else { return (id, false) }
        expired.insert(id)
        return (id, true)
    }

    /// The work ended: answers whether it went past its deadline.
    mutating func remove(_ id: UInt64) -> Bool {
        deadlines[id] = nil
        return expired.remove(id) != nil
    }

    /// The work past its deadline at `now`, to be stopped (again).
    mutating func due(now: Instant) -> [UInt64] {
        var due: [UInt64] = []
        for (id, deadline) in deadlines where deadline <= now {
            expired.insert(id)
            due.append(id)
        }
        return due.sorted()
    }

    /// When to look next: `repeatEvery` from now while work past its
    /// deadline still runs, else its earliest deadline; nil when nothing is watched.
    func nextLook(now: Instant) -> Instant? {
        if !expired.isEmpty { return now + repeatEvery }
        return deadlines.values.min()
    }
}
