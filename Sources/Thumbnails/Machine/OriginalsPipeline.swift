import DequeModule
import WarmfeedCore

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
    private var held: [Picture: (bytes: Int, holders: Int)] = [:]
    /// The bytes of originals held by resizes now.
    private(set) var heldBytes = 0
    /// Fetches on the wire (or waiting for their claim's answer).
    private(set) var onTheWire = 0
    private var typical: Int
    private var weighed = false
    /// Fetches held back while the pipeline is full.
    private var deferred: (urgent: Deque<Picture>, prewarm: Deque<Picture>) = ([], [])

    init(budget: Int) {
        self.budget = budget
        typical = min(1 << 20, max(1, budget / 8))
    }

    /// Whether a resize holds `picture`'s original.
    func holds(_ picture: Picture) -> Bool { held[picture] != nil }

    /// Whether the originals held, with those on their way, fill the budget.
    /// Never while nothing is held or on its way: one fetch always goes ahead.
    var isFull: Bool {
        (heldBytes > 0 || onTheWire > 0) && heldBytes + onTheWire * typical >= budget
    }

    /// How many fetches are held back.
    var deferredCount: Int { deferred.urgent.count + deferred.prewarm.count }

    /// A resize takes picture `picture`'s original of `bytes` (held once however many resizes hold it).
    mutating func hold(_ picture: Picture, bytes: Int) {
        if let current = held[picture] {
            held[picture] = (current.bytes, current.holders + 1)
        } else {
            held[picture] = (bytes, 1)
            heldBytes += bytes
        }
    }

    /// A resize of `picture` ended: its original goes once no other resize holds it.
    mutating func release(_ picture: Picture) {
        guard let current = held[picture] else { return }
        if current.holders > 1 {
            held[picture] = (current.bytes, current.holders - 1)
        } else {
            held[picture] = nil
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

    /// Holds `picture`'s fetch back until there is room.
    mutating func holdBack(_ picture: Picture, urgent: Bool) {
        if urgent { deferred.urgent.append(picture) } else { deferred.prewarm.append(picture) }
    }

    /// A reader now waits on `picture`'s held-back fetch: it joins the readers' line.
    mutating func raise(_ picture: Picture) {
        guard let index = deferred.prewarm.firstIndex(of: picture) else { return }
        deferred.prewarm.remove(at: index)
        deferred.urgent.append(picture)
    }

    /// Where a held-back fetch waits.
    enum Place {
        case readers
        case prewarm(Int)
    }

    /// Where the next held-back fetch to start waits, when there is room: a
    /// reader's first, then pre-warm's that a reader has since joined
    /// (`isUrgent`), then pre-warm's. `take(_:)` starts it.
    func nextHeldBack(isUrgent: (Picture) -> Bool) -> Place? {
        guard !isFull else { return nil }
        if !deferred.urgent.isEmpty { return .readers }
        if let index = deferred.prewarm.firstIndex(where: isUrgent) { return .prewarm(index) }
        return deferred.prewarm.isEmpty ? nil : .prewarm(deferred.prewarm.startIndex)
    }

    /// Takes the held-back fetch at `place` out of its line.
    mutating func take(_ place: Place) -> Picture {
        switch place {
        case .readers: deferred.urgent.removeFirst()
        case .prewarm(let index): deferred.prewarm.remove(at: index)
        }
    }
}
