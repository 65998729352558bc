import DequeModule

/// The connections suspended while a handler waits (for the store, the origin,
/// a resize), counted by client address and in all, each within its deadline.
///
/// A wait holds its connection, which no head-waiter rule can shed: without a
/// bound, a crowd of slow requests (thousands of cold thumbnails behind a
/// slow origin) filled the connection table and new clients were refused. So
/// waits are shed as head-waiters are, oldest first: past `perAddress` waits
/// of one address its oldest is answered now, past `total` waits the oldest
/// of the address that holds the most (a crowd from a few addresses sheds its
/// own, never the lone reader's); and a wait whose deadline passes is answered
/// then. A shed or late wait gets the answer its handler gave for that case
/// (a placeholder, a 503), its connection goes back to waiting for a head, and
/// the work goes on for whoever asks next.
///
/// A pure state machine, one per worker shard: it is told what happened, with
/// the time, and returns the waits to answer now.
struct SuspendedWaits {
    /// What it enforces, per shard.
    struct Limits: Equatable {
        var total: Int
        var perAddress: Int
    }

    /// How many waits were answered before their work ended, and why.
    struct Counts: Equatable {
        /// Past a cap (of the address, or in all).
        var shed = 0
        /// Past their deadline.
        var late = 0
    }

    private struct Wait {
        var id: ID
        var address: UInt32
        var deadline: Duration?
    }

    /// A wait's number: given once (`nextID`), never reused, so the work of a
    /// wait cut short that ends late cannot answer another wait.
    typealias ID = UInt64

    let limits: Limits
    private var waits: [ID: Wait] = [:]
    /// Waits in the order they began; stale entries (ended) are skipped and compacted.
    private var order = Deque<ID>()
    private var lastID: ID = 0
    private var byAddress: [UInt32: Int] = [:]
    private(set) var counts = Counts()

    init(limits: Limits) {
        self.limits = Limits(total: max(1, limits.total), perAddress: max(1, limits.perAddress))
    }

    /// Waits held now.
    var count: Int { waits.count }

    /// A number for the next wait.
    mutating func nextID() -> ID {
        lastID += 1
        return lastID
    }

    /// A wait begins, from `address`, to end by `deadline` (nil: its handler
    /// bounds it). Returns the waits to answer now to stay within the caps:
    /// the oldest of the address, or the oldest of the address holding the
    /// most; never the new one unless it alone is over a cap of 1.
    mutating func began(_ id: ID, address: UInt32, deadline: Duration?) -> [ID] {
        waits[id] = Wait(id: id, address: address, deadline: deadline)
        order.append(id)
        byAddress[address, default: 0] += 1
        var shed: [ID] = []
        if byAddress[address, default: 0] > limits.perAddress, let oldest = oldest(where: { $0.address == address }) {
            shed.append(oldest)
            remove(oldest)
        }
        // The oldest wait of the addresses holding the most (of all, when each holds as many).
        if waits.count > limits.total, let most = byAddress.values.max(),
            let oldest = oldest(where: { byAddress[$0.address] == most })
        {
            shed.append(oldest)
            remove(oldest)
        }
        counts.shed += shed.count
        compact()
        return shed
    }

    /// A wait ended (its work answered, or the server answered it). Returns
    /// whether it was still held: a wait already shed or late is not.
    @discardableResult
    mutating func ended(_ id: ID) -> Bool {
        guard waits[id] != nil else { return false }
        remove(id)
        compact()
        return true
    }

    /// The waits whose deadline has passed at `now`, no longer held.
    mutating func expire(at now: Duration) -> [ID] {
        let late = waits.values.filter { $0.deadline.map { $0 <= now } ?? false }.map(\.id)
        for id in late { remove(id) }
        counts.late += late.count
        compact()
        return late
    }

    /// Waits held by `address` now.
    func count(of address: UInt32) -> Int { byAddress[address] ?? 0 }

    private func oldest(where matches: (Wait) -> Bool) -> ID? {
        order.first { id in waits[id].map(matches) ?? false }
    }

    private mutating func remove(_ id: ID) {
        guard let wait = waits.removeValue(forKey: id) else { return }
        let left = (byAddress[wait.address] ?? 1) - 1
        byAddress[wait.address] = left > 0 ? left : nil
    }

    /// Keeps stale entries of `order` to about as many as the waits held (amortised O(1)).
    private mutating func compact() {
        if waits.isEmpty {
            order.removeAll()
        } else if order.count > 2 * waits.count + 64 {
            order = Deque(order.filter { waits[$0] != nil })
        } else {
            while let first = order.first, waits[first] == nil { order.removeFirst() }
        }
    }
}
