import Foundation
import HTTPServer
import OriginFetcher
import Synchronization
import Thumbnailer
import WarmfeedCore

/// Makes and keeps thumbnails: memory, then disk, then the origin.
///
/// All decisions (hit, negative hit, join, start, evict) are the pure
/// `ThumbnailCacheState`'s; this type holds it in a `Mutex` and does the I/O
/// outside the lock: reading the disk tier, fetching the original with libcurl,
/// resizing it with libvips, writing the result back.
final class ThumbnailService: Sendable {
    /// What a request gets.
    enum Outcome: Sendable {
        /// The thumbnail, as the whole response, built once.
        case image(PreparedResponse)
        /// The origin failed (now or recently): serve the placeholder.
        case placeholder
    }

    typealias Waiter = CheckedContinuation<Outcome, Never>

    /// The box thumbnails fit in at 1×; 2× doubles it.
    static let box = (width: 160, height: 120)

    private let state: Mutex<ThumbnailCacheState<PreparedResponse, Waiter>>
    let disk: ThumbnailDiskTier
    let fetcher: OriginFetcher
    let thumbnailer: Thumbnailer
    let origin: ImageSource
    let limits: FetchLimits
    private let started = ContinuousClock.now
    private let latencies = Mutex((origin: LatencyWindow(), thumbnail: LatencyWindow()))
    private let outcomes = Mutex((diskHits: 0, originFetches: 0, originErrors: 0))
    /// Originals fetched lately, so an item's 1x and 2x come from one fetch.
    private let originals = Mutex(LRUCache<Int64, [UInt8]>(capacity: 64 << 20))
    /// Fetches of originals in flight, shared by whoever needs the same one.
    private let fetches = OriginalFetches()

    init(memoryBudget: Int, negativeTTL: Double, disk: ThumbnailDiskTier, fetcher: OriginFetcher, thumbnailer: Thumbnailer, origin: ImageSource, limits: FetchLimits) {
        state = Mutex(ThumbnailCacheState(memoryBudget: memoryBudget, negativeTTL: negativeTTL))
        self.disk = disk
        self.fetcher = fetcher
        self.thumbnailer = thumbnailer
        self.origin = origin
        self.limits = limits
    }

    /// Seconds since the service started, on a monotonic clock.
    var now: Double {
        let elapsed = ContinuousClock.now - started
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// The thumbnail if it is in memory now (counted as a hit), without waiting.
    func cached(_ key: ThumbnailKey) -> PreparedResponse? {
        state.withLock { state in
            guard state.isCached(key), case .hit(let bytes) = state.request(key, now: now, waiter: nil) else { return nil }
            return bytes
        }
    }

    /// When a reader's browser last asked for a 2x thumbnail (seconds on `now`'s clock).
    private let lastDoubleDensity = Mutex<Double?>(nil)

    /// The scales pre-warm makes: 1x always, 2x only while readers on dense
    /// screens are about (one asked for a 2x in the last ten minutes). A
    /// DPR-1 audience never pays for 2x work it would not ask for.
    var scalesInDemand: [Int] {
        guard let last = lastDoubleDensity.withLock({ $0 }), now - last < 600 else { return [1] }
        return ThumbnailVariant.scales
    }

    /// A reader's request: from memory, by joining the job in flight, or by making it now.
    func thumbnail(_ key: ThumbnailKey, of item: FeedItem) async -> Outcome {
        if key.variant.scale > 1 {
            let now = now
            lastDoubleDensity.withLock { $0 = now }
        }
        return await withCheckedContinuation { (waiter: Waiter) in
            let decision = state.withLock { $0.request(key, now: now, waiter: waiter) }
            switch decision {
            case .hit(let bytes): waiter.resume(returning: .image(bytes))
            case .failedRecently: waiter.resume(returning: .placeholder)
            case .joined: break
            // A reader waits on this one: it goes ahead of queued pre-warm work in the libvips pool.
            case .start: Task(priority: .high) { await self.make(key, of: item) }
            }
        }
    }

    /// Pre-warm: make the thumbnail if nothing has it or is making it; nobody waits on the answer.
    ///
    /// The job runs in a task of its own: cancelling pre-warm (the reader
    /// jumped) stops it starting more work, but never fails a thumbnail a
    /// reader may have joined meanwhile.
    func warm(_ key: ThumbnailKey, of item: FeedItem) async {
        let decision = state.withLock { $0.request(key, now: now, waiter: nil, fromReader: false) }
        if case .start = decision {
            await Task(priority: .low) { await self.make(key, of: item) }.value
        }
    }

    /// What the cache holds and has done, for the admin view.
    var snapshot: ThumbnailSnapshot {
        let (counters, usage) = state.withLock { ($0.counters, $0.usage) }
        let (origin, thumbnail) = latencies.withLock { ($0.origin, $0.thumbnail) }
        let (diskHits, fetches, errors) = outcomes.withLock { ($0.diskHits, $0.originFetches, $0.originErrors) }
        return ThumbnailSnapshot(
            counters: counters, entries: usage.entries, bytes: usage.bytes, budget: usage.budget,
            negative: usage.negative, inFlight: usage.inFlight, disk: disk.usage, diskHits: diskHits,
            originFetches: fetches, originErrors: errors, originLatency: origin, thumbnailLatency: thumbnail
        )
    }

    private func make(_ key: ThumbnailKey, of item: FeedItem) async {
        let result = await produce(key, of: item)
        let waiters: [Waiter]
        let outcome: Outcome
        switch result {
        case .some(let bytes):
            guard let prepared = PreparedResponse(Self.imageResponse(ResponseBytes(bytes), format: key.variant.format)) else { fallthrough }
            waiters = state.withLock { $0.succeed(key, with: prepared, cost: bytes.count + 512) }
            outcome = .image(prepared)
        case .none:
            waiters = state.withLock { $0.fail(key, now: now) }
            outcome = .placeholder
        }
        for waiter in waiters { waiter.resume(returning: outcome) }
    }

    /// Disk, else origin and resize; nil when the origin or the image failed.
    private func produce(_ key: ThumbnailKey, of item: FeedItem) async -> [UInt8]? {
        if let bytes = disk.read(key) {
            outcomes.withLock { $0.diskHits += 1 }
            return bytes
        }
        guard let url = origin.url(for: item) else { return nil }
        let original: [UInt8]
        if let kept = originals.withLock({ $0.value(for: key.itemID) }) {
            original = kept
        } else {
            let fetched = await fetches.original(of: key.itemID) { [self] in
                let fetchStart = ContinuousClock.now
                var limits = limits
                // Only a folder import stores file:// URLs (feeds are refused them at import);
                // libcurl never follows a redirect into file:// whatever this says.
                limits.allowFileScheme = url.hasPrefix("file://")
                do throws(FetchError) {
                    let bytes = try await fetcher.fetch(url, limits: limits).bytes
                    outcomes.withLock { $0.originFetches += 1 }
                    latencies.withLock { $0.origin.record(Self.seconds(ContinuousClock.now - fetchStart)) }
                    originals.withLock { _ = $0.insert(bytes, for: key.itemID, cost: bytes.count) }
                    return .success(bytes)
                } catch {
                    outcomes.withLock { $0.originFetches += 1; $0.originErrors += 1 }
                    return .failure(error)
                }
            }
            guard case .success(let bytes) = fetched else { return nil }
            original = bytes
        }
        let resizeStart = ContinuousClock.now
        let format: ThumbnailFormat = key.variant.format == .webp ? .webp : .jpeg
        guard let thumbnail = try? await thumbnailer.thumbnail(
            of: original,
            width: Self.box.width * key.variant.scale,
            height: Self.box.height * key.variant.scale,
            format: format
        ) else { return nil }
        latencies.withLock { $0.thumbnail.record(Self.seconds(ContinuousClock.now - resizeStart)) }
        disk.write(key, thumbnail.bytes)
        return thumbnail.bytes
    }

    /// A thumbnail's response: cacheable for a day, varying with `Accept` (WebP or JPEG).
    static func imageResponse(_ bytes: ResponseBytes, format: ImageFormat) -> Response {
        Response(status: 200, headers: [
            HTTPField("Content-Type", format.mediaType),
            HTTPField("Cache-Control", "public, max-age=86400"),
            HTTPField("Vary", "Accept"),
        ], body: bytes)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// A consistent copy of the thumbnail cache's numbers.
struct ThumbnailSnapshot: Sendable {
    var counters: ThumbnailCacheState<PreparedResponse, ThumbnailService.Waiter>.Counters
    var entries: Int
    var bytes: Int
    var budget: Int
    var negative: Int
    var inFlight: Int
    var disk: (entries: Int, bytes: Int, budget: Int, corrupt: Int)
    var diskHits: Int
    var originFetches: Int
    var originErrors: Int
    var originLatency: LatencyWindow
    var thumbnailLatency: LatencyWindow

    /// Hits over all requests that reached a decision (hits, misses, joins, negative hits).
    var hitRatio: Double? {
        let total = counters.hits + counters.misses + counters.coalesced + counters.negativeHits
        return total == 0 ? nil : Double(counters.hits) / Double(total)
    }
}
