import Synchronization

/// The bytes of bodies a caller lets its fetches hold in memory, counted as
/// they arrive: those still on the wire and those handed over and not yet
/// let go (``BodyLease``). A fetch given an allowance takes from it before it
/// keeps a byte; when it cannot, its transfer pauses (libcurl stops reading
/// its socket) until there is room.
///
/// So the bytes held stay within the allowance whatever the origins send, a
/// `Content-Length` that lies or none at all: at most the limit, or one body
/// alone (up to `FetchLimits.maxBodyBytes`) when nothing else is held, so a
/// body larger than the limit still goes through. When every fetch holding
/// bytes is paused and nothing handed over is left to be let go, no room can
/// come: the youngest of them ends with `FetchError.busy` (a fetch to try
/// again later, not an origin's failure). The decisions are
/// ``BodyAllowanceState``'s, under one lock.
public final class BodyAllowance: Sendable {
    private let state: Mutex<BodyAllowanceState>
    /// How to wake the transfer loops that hold a paused body, called once
    /// room comes (they would otherwise look again only 20 ms later).
    private let wakes = Mutex<[@Sendable () -> Void]>([])

    /// An allowance of `bytes`.
    public init(bytes: Int) {
        state = Mutex(BodyAllowanceState(limit: bytes))
    }

    /// What the allowance holds now and did since the start.
    public var usage: BodyAllowanceState.Usage {
        state.withLock { $0.usage }
    }

    func register() -> UInt64 {
        state.withLock { $0.register() }
    }

    func take(_ token: UInt64, atLeast: Int, upTo: Int) -> Int? {
        state.withLock { $0.take(token, atLeast: atLeast, upTo: upTo) }
    }

    /// Fetch `token` paused: it found no room; `wake` is called when some comes.
    func pause(_ token: UInt64, wake: @escaping @Sendable () -> Void) {
        state.withLock { $0.pause(token) }
        wakes.withLock { $0.append(wake) }
    }

    /// Wakes the loops of the bodies paused for room, once.
    private func roomCame() {
        let waiting = wakes.withLock { wakes in
            defer { wakes.removeAll() }
            return wakes
        }
        for wake in waiting { wake() }
    }

    /// The fetch `token` ended: its bytes are let go, or handed over with the
    /// body in a lease (`keeping`) that lets them go when it is released.
    func end(_ token: UInt64, keeping: Bool) -> BodyLease? {
        let kept = state.withLock { $0.end(token, keeping: keeping) }
        if !keeping { roomCame() }
        return kept > 0 ? BodyLease(allowance: self, bytes: kept) : nil
    }

    /// The paused fetch to end so the others can go on, when no room can come otherwise.
    func stalled() -> UInt64? {
        state.withLock { $0.stalled() }
    }

    /// Counts a fetch ended (busy) so the others can go on.
    func countShed() {
        state.withLock { $0.countShed() }
    }

    fileprivate func letGo(_ bytes: Int) {
        state.withLock { $0.letGo(bytes) }
        roomCame()
    }
}

/// The bytes of a body handed over by a fetch with a ``BodyAllowance``: they
/// count against it until the lease is released (the last reference to it
/// goes), which the holder does when it lets the body go.
public final class BodyLease: Sendable {
    private let allowance: BodyAllowance
    /// The bytes it holds.
    public let bytes: Int

    fileprivate init(allowance: BodyAllowance, bytes: Int) {
        self.allowance = allowance
        self.bytes = bytes
    }

    deinit {
        allowance.letGo(bytes)
    }
}

/// A ``BodyAllowance``'s bookkeeping, with no locks and no libcurl: the
/// bytes each fetch holds, which fetches are paused, what was handed over.
public struct BodyAllowanceState: Sendable {
    /// What an allowance holds now and did since the start.
    public struct Usage: Sendable, Equatable {
        /// The limit.
        public var limitBytes = 0
        /// Bytes of bodies still arriving, and of bodies handed over and not let go.
        public var onTheWireBytes = 0
        public var handedOverBytes = 0
        /// The most bytes ever held at once.
        public var peakBytes = 0
        /// Fetches paused now for room.
        public var paused = 0
        /// Times a fetch paused for room, and fetches ended (busy) so others could go on, since the start.
        public var pauses = 0
        public var shed = 0
    }

    let limit: Int
    private var holding: [UInt64: Int] = [:]
    private var paused: Set<UInt64> = []
    private var handedOver = 0
    private var nextToken: UInt64 = 1
    private var peak = 0
    private var pauses = 0
    private var shedCount = 0

    init(limit: Int) {
        self.limit = max(0, limit)
    }

    var usage: Usage {
        Usage(
            limitBytes: limit, onTheWireBytes: holding.values.reduce(0, +), handedOverBytes: handedOver, peakBytes: peak,
            paused: paused.count, pauses: pauses, shed: shedCount)
    }

    private var held: Int { holding.values.reduce(0, +) + handedOver }

    /// A new fetch's token.
    mutating func register() -> UInt64 {
        defer { nextToken += 1 }
        return nextToken
    }

    /// The bytes more fetch `token` may hold (and then holds), at least
    /// `atLeast` (what its next chunk needs) and at most `upTo` (what its
    /// buffer would grow to): as many as the limit leaves, or, when it alone
    /// holds anything, what it needs and a quarter more (a body larger than
    /// the limit grows by quarters, not chunk by chunk); nil when it has no room.
    mutating func take(_ token: UInt64, atLeast: Int, upTo: Int) -> Int? {
        guard atLeast > 0 else { return 0 }
        let room = limit - held
        let alone = handedOver == 0 && holding.allSatisfy { $0.key == token }
        let granted: Int
        if room >= atLeast {
            granted = min(max(atLeast, upTo), room)
        } else if alone {
            granted = max(atLeast, min(upTo, (holding[token] ?? 0) / 4))
        } else {
            return nil
        }
        paused.remove(token)
        holding[token, default: 0] += granted
        peak = max(peak, held)
        return granted
    }

    /// Fetch `token` found no room and waits for some.
    mutating func pause(_ token: UInt64) {
        if paused.insert(token).inserted { pauses += 1 }
    }

    /// Fetch `token` ended: answers the bytes handed over with its body
    /// (`keeping`), 0 when they are let go.
    mutating func end(_ token: UInt64, keeping: Bool) -> Int {
        paused.remove(token)
        let bytes = holding.removeValue(forKey: token) ?? 0
        if keeping { handedOver += bytes }
        return keeping ? bytes : 0
    }

    /// Bytes handed over are let go.
    mutating func letGo(_ bytes: Int) {
        handedOver = max(0, handedOver - bytes)
    }

    /// The youngest paused fetch holding bytes, when every fetch holding
    /// bytes is paused and nothing handed over will be let go: no room can
    /// come, so it is to end. Nil while room can still come.
    /// A fetch holding bytes alone is never stalled: `take` lets it grow (by
    /// quarters) as soon as it is resumed. Named so, a body paused when the
    /// last body handed over was let go was ended busy before its transfer
    /// could take the room (BodyAllowanceTests failed one run in four).
    func stalled() -> UInt64? {
        guard handedOver == 0, !paused.isEmpty else { return nil }
        let holders = holding.filter { $0.value > 0 }.map(\.key)
        guard holders.count > 1, holders.allSatisfy({ paused.contains($0) }) else { return nil }
        return holders.max()
    }

    /// Counts a fetch ended so others can go on.
    mutating func countShed() {
        shedCount += 1
    }
}
