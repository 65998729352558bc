import DequeModule

/// The originals between the origin and libvips, bounded: the bytes of those
/// handed to resizes and not yet let go (an original is held until every
/// variant asked of it is made), the fetches on the wire counted at what an
/// original has weighed lately, and the fetches held back while that is at
/// the bound, readers' first.
///
/// That weight only paces how many fetches start. The bytes themselves are
/// bounded by the service's `BodyAllowance` (the budget and a quarter), which counts
/// each body as its bytes arrive and until the resizes let it go, and pauses
/// a body that finds no room: an origin that serves small originals first,
/// then large ones (or lies in its `Content-Length`), cannot hold more.
///
/// Fetches on the wire count too: before the first original arrives, each at
/// an eighth of the bound (a megabyte at most). Counted as nothing, the first
/// burst of a crowd (a hundred readers' misses at once) started every fetch,
/// and their bodies (112 MB under heaptrack) left the heap that much larger
/// for good. A pure value, part of `ThumbnailCacheState` and under its lock.
struct OriginalsPipeline {
    /// The most bytes of originals waiting for libvips before new fetches wait.
    let budget: Int
    private var held: [Int64: (bytes: Int, holders: Int)] = [:]
    /// The bytes of originals held by resizes now.
    private(set) var heldBytes = 0
    /// Fetches on the wire (or waiting for their claim's answer).
    private(set) var onTheWire = 0
    private var typical: Int
    private var weighed = false
    /// Fetches held back while the pipeline is full.
    private var deferred: (urgent: Deque<Int64>, prewarm: Deque<Int64>) = ([], [])

    init(budget: Int) {
        self.budget = budget
        typical = min(1 << 20, max(1, budget / 8))
    }

    /// Whether a resize holds item `itemID`'s original.
    func holds(_ itemID: Int64) -> Bool { held[itemID] != nil }

    /// Whether the originals held, with those on their way, fill the budget.
    /// Never while nothing is held or on its way: one fetch always goes ahead.
    var isFull: Bool {
        (heldBytes > 0 || onTheWire > 0) && heldBytes + onTheWire * typical >= budget
    }

    /// How many fetches are held back.
    var deferredCount: Int { deferred.urgent.count + deferred.prewarm.count }

    /// A resize takes item `itemID`'s original of `bytes` (held once however many resizes hold it).
    mutating func hold(_ itemID: Int64, bytes: Int) {
        if let current = held[itemID] {
            held[itemID] = (current.bytes, current.holders + 1)
        } else {
            held[itemID] = (bytes, 1)
            heldBytes += bytes
        }
    }

    /// A resize of item `itemID` ended: its original goes once no other resize holds it.
    mutating func release(_ itemID: Int64) {
        guard let current = held[itemID] else { return }
        if current.holders > 1 {
            held[itemID] = (current.bytes, current.holders - 1)
        } else {
            held[itemID] = nil
            heldBytes -= current.bytes
        }
    }

    /// A fetch takes its place on the wire.
    mutating func fetchStarted() { onTheWire += 1 }

    /// A fetch left the wire (arrived, failed, or went to another node).
    mutating func fetchEnded() { onTheWire -= 1 }

    /// An original of `bytes` arrived: what originals weigh, as a moving average.
    mutating func weigh(_ bytes: Int) {
        typical = weighed ? (typical * 7 + bytes) / 8 : bytes
        weighed = true
    }

    /// Holds item `itemID`'s fetch back until there is room.
    mutating func holdBack(_ itemID: Int64, urgent: Bool) {
        if urgent { deferred.urgent.append(itemID) } else { deferred.prewarm.append(itemID) }
    }

    /// A reader now waits on item `itemID`'s held-back fetch: it joins the readers' line.
    mutating func raise(_ itemID: Int64) {
        guard let index = deferred.prewarm.firstIndex(of: itemID) else { return }
        deferred.prewarm.remove(at: index)
        deferred.urgent.append(itemID)
    }

    /// Where a held-back fetch waits.
    enum Place {
        case readers
        case prewarm(Int)
    }

    /// Where the next held-back fetch to start waits, when there is room: a
    /// reader's first, then pre-warm's that a reader has since joined
    /// (`isUrgent`), then pre-warm's. `take(_:)` starts it.
    func nextHeldBack(isUrgent: (Int64) -> Bool) -> Place? {
        guard !isFull else { return nil }
        if !deferred.urgent.isEmpty { return .readers }
        if let index = deferred.prewarm.firstIndex(where: isUrgent) { return .prewarm(index) }
        return deferred.prewarm.isEmpty ? nil : .prewarm(deferred.prewarm.startIndex)
    }

    /// Takes the held-back fetch at `place` out of its line.
    mutating func take(_ place: Place) -> Int64 {
        switch place {
        case .readers: deferred.urgent.removeFirst()
        case .prewarm(let index): deferred.prewarm.remove(at: index)
        }
    }
}
