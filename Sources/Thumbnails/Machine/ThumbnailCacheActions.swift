import WarmfeedCore

/// The vocabulary of the thumbnail cache's state machine: who asks, what
/// was decided, how a job failed, what to do next, and what was counted.
extension ThumbnailCacheState {
    /// Who asks.
    public enum Asker: Sendable {
        /// A reader's browser: counted in the hit ratio; its jobs run first.
        case reader
        /// Pre-warm: not counted as a reader's hit or miss; waits only on jobs it starts.
        case prewarm
        /// A reader who takes only what pre-warm's line makes (AVIF): counted
        /// as a reader, but its job goes at pre-warm's pace and joining one
        /// raises nothing, so no request starts an AVIF ahead of pre-warm.
        case patientReader
    }

    /// How a request was decided, for the counters and metrics.
    public enum Decision: Sendable, Equatable {
        /// Served from memory.
        case hit
        /// Answered with the placeholder: the origin failed for it recently.
        case failedRecently
        /// Joined the job already making it.
        case joined
        /// Started a job.
        case started
    }

    /// What a waiter is answered with.
    public typealias Answer = ThumbnailAnswer<Value>

    /// Why a job failed. Real failures are remembered (negative cache), for
    /// `firstNegativeTTL` seconds, doubling with each failure in a row up to
    /// `negativeTTL`; `busy` is not a failure of the origin and is not remembered.
    public enum Failure: Error, Sendable, Equatable {
        /// The item has no original that may be fetched.
        case noSource
        /// The origin failed (an error status, a reset, a timeout, a refused URL).
        case origin
        /// The original could not be made into a thumbnail (not an image, truncated, too large).
        case image
        /// The origin was busy (no connection to it came free in time) or the
        /// fetcher stopped: the waiters get the placeholder, nothing is remembered.
        case busy
    }

    /// A thumbnail ready to keep: its value for memory and waiters, its bytes
    /// for the lookup tiers (passed through, never kept here), its cost in bytes.
    public struct Made {
        public var value: Value
        public var bytes: [UInt8]
        public var cost: Int

        /// Makes one.
        public init(value: Value, bytes: [UInt8], cost: Int) {
            self.value = value
            self.bytes = bytes
            self.cost = cost
        }
    }

    /// Something for the caller to do, outside the lock.
    public enum Action {
        /// Answer these waiters.
        case answer([Waiter], Answer)
        /// Look for `key` in lookup tier `tier`, then report `tierAnswered`.
        case lookUp(ThumbnailKey, tier: Int)
        /// Read the item `key` is a thumbnail of, and say what came (`itemRead`):
        /// every tier missed, and the request came without it.
        case readItem(ThumbnailKey)
        /// Read `picture`'s original from disk (the `OriginalStore`), then report `originalRead`.
        case readOriginal(picture: Picture)
        /// Claim the fetching of `picture`'s original in shared tier `tier`
        /// (or learn which node owns it, or that it failed), then report `originalClaimAnswered`.
        case claimOriginal(picture: Picture, tier: Int)
        /// Fetch the original of `item` (`picture`), then report `originalArrived`.
        case fetchOriginal(picture: Picture, item: Item, urgent: Bool)
        /// A reader now waits on the fetch of `item`'s original, started for
        /// pre-warm: if it still waits for a connection, it goes first.
        case promoteFetch(picture: Picture, item: Item)
        /// Keep the original just fetched on disk (when originals are kept);
        /// when `owningIn` names a shared tier, this node now owns it there
        /// (and lets go of its claim); then report `originalKept`.
        case keepOriginal(picture: Picture, bytes: [UInt8], owningIn: Int?)
        /// The fetch of `picture`'s original failed: tell shared tier
        /// `tier`, for `seconds`, and let go of the claim held there.
        case originalFailed(picture: Picture, seconds: Double, tier: Int)
        /// Let go of the claim on `picture`'s original held in tier `tier`, with nothing to share.
        case releaseOriginalClaim(picture: Picture, tier: Int)
        /// Ask the node at `owner`, which owns `key`'s original, for `key`
        /// (it makes it), then report `ownerAnswered`.
        case askOwner(ThumbnailKey, owner: String, urgent: Bool)
        /// The owner at `url` did not answer: forget it in shared tier `tier`, if it is still the one named.
        case forgetOwner(picture: Picture, url: String, tier: Int)
        /// Resize `original` into `key`'s variant, then report `resized`.
        case resize(ThumbnailKey, original: [UInt8], urgent: Bool)
        /// A reader now waits on `key`'s resize, started for pre-warm: if it
        /// still waits for a worker, it goes ahead of pre-warm's.
        case promoteResize(ThumbnailKey)
        /// Write `bytes` for `key` into each of these lookup tiers.
        case store(ThumbnailKey, bytes: [UInt8], tiers: [Int])
        /// Remember in shared tier `tier` that `key` failed, for `seconds`.
        case storeFailure(ThumbnailKey, seconds: Double, tier: Int)
        /// Values dropped from memory: let them go outside the lock.
        case release([Value])
    }

    /// What a lookup tier answered.
    public enum Lookup {
        /// It had the thumbnail.
        case hit(Made)
        /// It did not.
        case miss
        /// It remembers the thumbnail failed (another node of a cluster found
        /// so), for `remaining` more seconds.
        case failed(remaining: Double)
    }

    /// What reading a job's item found (see `Action.readItem`).
    public enum ItemRead {
        /// The item: the job goes on to the claim or the origin.
        case found(Item)
        /// No item has that id: its waiters are answered `.noSuchItem`.
        case noSuchItem
        /// It has no picture, or the store does not answer: its waiters get the placeholder.
        case placeholder
    }

    /// What the node that owns an original answered when asked for a variant of it.
    public enum OwnerAnswer {
        /// It made (or had) the thumbnail.
        case made(Made)
        /// The origin failed for it there; remembered `remaining` seconds.
        case failed(remaining: Double)
        /// It did not answer (gone, or not answering in time).
        case unreachable
        /// No connection to it came free in time: the placeholder, nothing remembered or forgotten.
        case busy
    }

    /// Counters for the admin view.
    public struct Counters: Sendable, Equatable {
        /// Readers' requests served from memory.
        public var hits = 0
        /// Readers' requests that started a job.
        public var misses = 0
        /// Readers' requests that joined a job already running.
        public var coalesced = 0
        /// Readers' requests answered from the negative cache.
        public var negativeHits = 0
        /// Entries evicted from memory to keep it inside its budget.
        public var evictions = 0
        /// Jobs that ended in failure (each one negative-cached).
        public var failures = 0
        /// Jobs that ended because the origin was busy (not remembered).
        public var busy = 0
        /// Jobs started by pre-warm rather than by a reader.
        public var prewarmStarts = 0
        /// Hits in each lookup tier.
        public var tierHits: [Int]
        /// Originals fetched from the origin, and how many of those failed.
        public var originFetches = 0
        public var originErrors = 0
        /// Originals found already kept (an item's other variant fetched it).
        public var originalReuses = 0
        /// Waiters that went away before their answer.
        public var cancelledWaiters = 0
        /// Thumbnails resized here.
        public var resizes = 0
        /// Originals read back from disk (the `OriginalStore`) for a variant, instead of a fetch.
        public var originalsFromDisk = 0
        /// Claims on fetching an original this node won (it fetched it, and
        /// owns it), and originals another node fetched (it owns them, or met
        /// their failure) that this node's misses were answered from.
        public var claimsWon = 0
        public var claimsWaited = 0
        /// Claims that could not be asked for (the shared tier was down or slow): fetched here regardless.
        public var claimsUnavailable = 0
        /// Variants asked of the node that owns their original, and those asks that went unanswered.
        public var ownerAsks = 0
        public var ownerUnreachable = 0
        /// Failures learnt from the shared tier (another node's origin fetch failed).
        public var sharedFailures = 0
    }
}

extension ThumbnailCacheState.Action {
    /// What kind of work an action is, decided here once for every action:
    /// the service runs each kind its own way (at once, as the job's next
    /// step, or as a write beside it) and picks its priority from the kind.
    public enum Kind: Equatable, Sendable {
        /// Done at once outside the lock, with nothing to wait for: answers, promotions, values let go.
        case quick
        /// The job's own next step: its result is the job's next event.
        /// `urgent`: a reader waits on it (true), only pre-warm does (false),
        /// or it runs at its caller's pace (nil).
        case jobStep(urgent: Bool?)
        /// A write beside the job that the job does not wait on. `othersWait`:
        /// other nodes may (a failure or an original to share), so it is not
        /// held back behind pre-warm's work.
        case sideEffect(othersWait: Bool)
    }

    /// This action's kind.
    public var kind: Kind {
        switch self {
        case .answer, .promoteFetch, .promoteResize, .release: .quick
        case .lookUp, .readItem, .readOriginal, .claimOriginal: .jobStep(urgent: nil)
        case .fetchOriginal(_, _, let urgent), .resize(_, _, let urgent), .askOwner(_, _, let urgent): .jobStep(urgent: urgent)
        case .storeFailure, .keepOriginal, .originalFailed: .sideEffect(othersWait: true)
        case .store, .releaseOriginalClaim, .forgetOwner: .sideEffect(othersWait: false)
        }
    }
}

/// What a waiter of the thumbnail cache is answered with.
public enum ThumbnailAnswer<Value> {
    /// The thumbnail.
    case image(Value)
    /// The placeholder: the origin or the image failed.
    case placeholder
    /// No item has the id the thumbnail was asked for.
    case noSuchItem
    /// Nothing to wait for: pre-warm joined a job someone else started, or the waiter was cancelled.
    case released
}

extension ThumbnailAnswer: Sendable where Value: Sendable {}

extension ThumbnailCacheState.Action: Sendable where Waiter: Sendable, Item: Sendable {}

extension ThumbnailCacheState.Made: Sendable {}
