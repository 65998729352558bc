import DequeModule

/// Which connections the server holds, and which of them to shed so that slow
/// clients cannot starve the rest.
///
/// A connection is *waiting* from the moment it opens, or its previous answer
/// is sent, until its next request head is complete; otherwise it is busy. Only
/// waiting connections are ever shed, oldest wait first: idle keep-alive
/// connections and slow (or hostile) clients trickling a head. Three rules:
///
/// - a wait longer than `headTimeout` ends the connection: with a 408 when a
///   head had begun to arrive (nginx's `client_header_timeout`, but for the
///   whole head, however it trickles in), silently when none had (an idle
///   keep-alive connection, as nginx's `keepalive_timeout` closes it: a 408
///   nobody asked for would be read by a client that reuses the connection
///   as the answer to its next request, RFC 9112 §9.5);
/// - an address holding more than `perAddress` connections loses its oldest
///   waiting one;
/// - past `connections` in all, the oldest waiting connection anywhere makes
///   room for the new one.
///
/// If nothing is waiting, the new connection itself is refused.
///
/// A pure state machine: it is told what happened, with the time, and returns
/// the sockets to shut down. Connections are keyed by socket: a worker
/// reports a close before it closes the descriptor, so no two live
/// connections share one.
struct ConnectionTable {
    /// What the table enforces.
    struct Limits {
        var connections: Int
        var perAddress: Int
        var headTimeout: Duration
    }

    /// How many connections were shed, and why.
    struct Counts: Equatable {
        /// Heads that began and did not arrive whole within the head timeout.
        var timedOut = 0
        /// Idle connections (no byte of a next head) closed silently after the head timeout.
        var idleClosed = 0
        /// Waiting connections shed to make room for a new one.
        var crowdedOut = 0
        /// New connections refused because nothing could be shed.
        var refused = 0
        /// New connections answered a 4xx at a first look (see `FirstLook`).
        var malformed = 0
    }

    private struct Entry {
        var address: UInt32
        /// The ticket of the current wait; nil while a request is handled.
        var wait: UInt64?
        /// Shut down already, its close not reported yet.
        var shed = false
    }

    /// A wait, in the order waits began. Stale once its entry moved on (a new
    /// ticket, busy, shed or closed); stale waits are skipped and compacted.
    private struct Wait {
        var socket: Int32
        var ticket: UInt64
        var since: Duration
        /// Bytes of the head were there when the wait began (a new connection's first look saw them).
        var began: Bool
        /// The connection's first wait (it has sent no request before).
        var first: Bool
    }

    /// A wait that outlasted the head timeout, for the caller to judge:
    /// did a head begin (answer 408), or was the connection idle (close it silently)?
    struct Overdue: Equatable {
        var socket: Int32
        /// How long it has waited.
        var waited: Duration
        /// Whether bytes of a head had arrived when the wait began.
        var began: Bool
        /// Whether it is the connection's first wait: any byte it received is a head's.
        var first = false
    }

    let limits: Limits
    private var entries: [Int32: Entry] = [:]
    /// Connections not yet shed, in all and by address.
    private(set) var live = 0
    private var liveByAddress: [UInt32: Int] = [:]
    private var waits = Deque<Wait>()
    private var nextTicket: UInt64 = 0
    private(set) var counts = Counts()

    init(limits: Limits) {
        self.limits = limits
    }

    /// A connection opened, having sent bytes already (`began`) or not. Returns
    /// the sockets to shut down: at most one, which may be the new connection itself.
    mutating func opened(socket: Int32, address: UInt32, at now: Duration, began: Bool = false) -> [Int32] {
        entries[socket] = Entry(address: address)
        live += 1
        liveByAddress[address, default: 0] += 1
        startWait(socket: socket, at: now, began: began, first: true)
        if liveByAddress[address, default: 0] > limits.perAddress {
            return [makeRoom(from: address, for: socket)]
        }
        if live > limits.connections {
            return [makeRoom(from: nil, for: socket)]
        }
        return []
    }

    /// A request head is complete: the connection is busy until its answer is sent.
    mutating func headArrived(socket: Int32) {
        setWait(nil, of: socket)
    }

    /// An answer was sent (or the request ended): the connection waits for its next head.
    mutating func answered(socket: Int32, at now: Duration) {
        guard let entry = entries[socket], !entry.shed else { return }
        startWait(socket: socket, at: now, began: false, first: false)
    }

    /// The connection is gone.
    mutating func closed(socket: Int32) {
        guard let entry = entries.removeValue(forKey: socket) else { return }
        if !entry.shed { forget(address: entry.address) }
        if entries.isEmpty { waits.removeAll() }
    }

    /// A new connection's first bytes were refused (see `FirstLook`): it is answered a 4xx and shed.
    mutating func malformed(socket: Int32) {
        guard let entry = entries[socket], !entry.shed else { return }
        counts.malformed += 1
        shed(socket)
    }

    /// Sheds every connection whose wait has outlasted the head timeout, and
    /// sorts them by `headBegan`: those whose head began get a 408
    /// (`slowHeads`), idle ones are closed without a word (`idle`).
    mutating func expire(at now: Duration, headBegan: (Overdue) -> Bool) -> (slowHeads: [Int32], idle: [Int32]) {
        var expired: (slowHeads: [Int32], idle: [Int32]) = ([], [])
        while let oldest = waits.first {
            if isCurrent(oldest) {
                guard now - oldest.since >= limits.headTimeout else { break }
                shed(oldest.socket)
                if headBegan(Overdue(socket: oldest.socket, waited: now - oldest.since, began: oldest.began, first: oldest.first)) {
                    counts.timedOut += 1
                    expired.slowHeads.append(oldest.socket)
                } else {
                    counts.idleClosed += 1
                    expired.idle.append(oldest.socket)
                }
            }
            waits.removeFirst()
        }
        return expired
    }

    /// Connections held, those being shed included.
    var held: Int { entries.count }

    // MARK: - Shedding

    /// Sheds the oldest waiting connection (of `address`, if given) and returns
    /// its socket. The connection that just opened is waiting too, last, so it
    /// is the one refused when no older one waits.
    private mutating func makeRoom(from address: UInt32?, for newcomer: Int32) -> Int32 {
        if address == nil {
            // Any address: the first current wait; stale ones before it go for good.
            while let oldest = waits.first, !isCurrent(oldest) { waits.removeFirst() }
        }
        let victim = waits.first { wait in
            isCurrent(wait) && (address == nil || entries[wait.socket]?.address == address)
        }
        let socket = victim?.socket ?? newcomer
        if socket == newcomer { counts.refused += 1 } else { counts.crowdedOut += 1 }
        shed(socket)
        return socket
    }

    private mutating func shed(_ socket: Int32) {
        guard var entry = entries[socket], !entry.shed else { return }
        entry.shed = true
        entry.wait = nil
        entries[socket] = entry
        forget(address: entry.address)
    }

    private mutating func forget(address: UInt32) {
        live -= 1
        let left = liveByAddress[address, default: 1] - 1
        liveByAddress[address] = left > 0 ? left : nil
    }

    // MARK: - Waits

    private mutating func startWait(socket: Int32, at now: Duration, began: Bool, first: Bool) {
        nextTicket += 1
        setWait(nextTicket, of: socket)
        waits.append(Wait(socket: socket, ticket: nextTicket, since: now, began: began, first: first))
        // Busy and closed connections leave stale waits behind; keep them to at
        // most about as many as the current ones (amortised O(1) per wait).
        if waits.count > 2 * entries.count + 64 {
            waits = Deque(waits.filter(isCurrent))
        }
    }

    /// Sets the ticket of `socket`'s wait, if it is held. Read and written
    /// whole: an optional-chained write (`entries[socket]?.wait = …`) goes
    /// through the dictionary's modify coroutines, whose frames cost three
    /// heap allocations on each request here.
    private mutating func setWait(_ ticket: UInt64?, of socket: Int32) {
        guard var entry = entries[socket] else { return }
        entry.wait = ticket
        entries[socket] = entry
    }

    private func isCurrent(_ wait: Wait) -> Bool {
        guard let entry = entries[wait.socket] else { return false }
        return entry.wait == wait.ticket
    }
}
