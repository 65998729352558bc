import Foundation
import ImageFormats
import Synchronization
import Workers

/// Makes thumbnails of images from an origin with libvips, on a bounded pool
/// of its own threads.
///
/// A thumbnail is made in one decode: libvips shrinks JPEG and WebP while
/// loading them, applies the EXIF orientation, scales the image to cover the
/// box asked for and crops the rest from the centre, then saves it without any
/// metadata. The source's header is checked against ``ThumbnailLimits`` before
/// a pixel is decoded, and a damaged or cut source is refused, never served
/// half grey.
///
/// libvips runs only on the thumbnailer's worker threads (at most `workers` at
/// a time), never on Swift's cooperative pool; callers wait on a continuation.
/// Queued work runs in the order of the callers' task priorities, so a
/// reader's request (`.high`) overtakes pre-warm work (`.low`). One
/// thumbnailer per process is enough; libvips itself is started once.
public final class Thumbnailer: Sendable {
    /// The limits every source is checked against.
    public let limits: ThumbnailLimits
    /// The largest width or height a thumbnail may be asked for.
    public static let maxSide = 4096

    /// The memory decodes may hold, shared with the process's other thumbnailers.
    public let decodeBudget: DecodeBudget
    private let pool: WorkerPool
    private let counters = Mutex(ThumbnailerStats())

    /// The process's thumbnailer, one thread per core: libvips is the
    /// process's own (started once, its settings global), and servers sharing
    /// a process (a cluster's nodes in one test, or every server of the test
    /// suite at once) share its cores through one queue in priority order,
    /// instead of each starting threads for every core (sixty threads of
    /// libvips on two cores starved everything else, the renewal of a
    /// cluster's claims among it).
    public static let shared = Thumbnailer()

    /// Starts `workers` worker threads (at least one). The default is one per
    /// core the process can use (`UsableCores`); every job waits for its
    /// memory in `decodeBudget`, by default the process's.
    public init(
        workers: Int = UsableCores.count, limits: ThumbnailLimits = .init(), decodeBudget: DecodeBudget = .shared
    ) {
        self.limits = limits
        self.decodeBudget = decodeBudget
        _ = LibVips.started
        pool = WorkerPool(threads: workers, name: "thumbnailer", onThreadExit: { LibVips.threadDidFinish() })
    }

    deinit {
        pool.stop()
    }

    /// A thumbnail of `source` exactly `width` × `height` pixels: the image is
    /// scaled to cover the box (upright, by its EXIF orientation) and cropped
    /// from the centre.
    ///
    /// - Parameters:
    ///   - source: the encoded original (JPEG, PNG, WebP or GIF).
    ///   - quality: the encoder's quality, 1 to 100; by default the format's
    ///     ``ImageFormat/thumbnailQuality``, except for AVIF, whose quality is
    ///     then chosen picture by picture so its SSIM reaches the WebP's
    ///     (``QualitySearch``).
    /// - Throws: ``ThumbnailError``; `.cancelled` only when the calling task is
    ///   cancelled before a worker took the job.
    public func thumbnail(
        of source: [UInt8], width: Int, height: Int, format: ImageFormat, quality: Int? = nil
    ) async throws(ThumbnailError) -> Thumbnail {
        let job = ThumbnailJob(
            source: source, width: width, height: height, format: format,
            quality: min(100, max(1, quality ?? format.thumbnailQuality)),
            matchesWebP: format == .avif && quality == nil, limits: limits)
        let result: Result<Thumbnail, ThumbnailError>
        if let refusal = refusal(of: job) {
            result = .failure(refusal)
        } else {
            // The header is read here, on the caller's thread (microseconds), so the
            // decode's memory is known before the job waits for it.
            switch job.facts() {
            case .failure(let error): result = .failure(error)
            case .success(let (facts, cost)): result = await make(job, info: facts.info, cost: cost)
            }
        }
        counters.withLock { counters in
            switch result {
            case .success: counters.made += 1
            case .failure(.cancelled): counters.cancelled += 1
            case .failure: counters.failed += 1
            }
        }
        return try result.get()
    }

    /// Runs `job` on a worker once its `cost` fits in the decode budget (the
    /// worker waits for it), or refuses it at once when it never can.
    private func make(_ job: ThumbnailJob, info: ImageInfo, cost: Int) async -> Result<Thumbnail, ThumbnailError> {
        guard decodeBudget.couldFit(cost) else { return .failure(.overDecodeBudget(bytes: cost)) }
        // A search for AVIF's quality gives way, between its encodes, to work more urgent than its own.
        let priority = Task.currentPriority
        let (maxWorkTime, budget) = (limits.maxWorkTime, decodeBudget)
        let result = await pool.perform(cancelled: .failure(.cancelled)) { [pool] () -> Result<Thumbnail, ThumbnailError> in
            guard budget.enter(cost: cost, priority: priority.rawValue) else { return .failure(.overDecodeBudget(bytes: cost)) }
            defer { budget.leave(cost: cost) }
            // The deadline runs from the decode's start, not from the wait for its memory.
            return job.run(info: info, deadline: .now + maxWorkTime, hurry: { pool.hasQueued(above: priority) })
        }
        if case .failure(.timedOut) = result { decodeBudget.countTimedOut() }
        return result
    }

    /// What the header of `source` says (size as displayed, format,
    /// orientation), read on the calling thread without decoding pixels: a
    /// header read costs microseconds, too little to queue. The limits are
    /// not applied, so a decompression bomb's declared size can be reported.
    public func info(of source: [UInt8]) throws(ThumbnailError) -> ImageInfo {
        try source.withUnsafeBytes { SourceHeader.read($0) }.get()
    }

    /// Counters for the admin page.
    public var stats: ThumbnailerStats {
        let (queued, running, peakRunning) = pool.counts
        var stats = counters.withLock { $0 }
        stats.queued = queued
        stats.running = running
        stats.peakRunning = peakRunning
        return stats
    }

    /// Runs work that holds `cost` bytes on the thumbnailer's workers once
    /// they fit in the decode budget (`refused` when they never can); used by
    /// ``original(width:height:seed:format:orientation:)``.
    func perform<T: Sendable>(cost: Int, refused: T, cancelled: T, _ work: @escaping @Sendable () -> T) async -> T {
        guard decodeBudget.couldFit(cost) else { return refused }
        let (budget, priority) = (decodeBudget, Task.currentPriority.rawValue)
        return await pool.perform(cancelled: cancelled) {
            guard budget.enter(cost: cost, priority: priority) else { return refused }
            defer { budget.leave(cost: cost) }
            return work()
        }
    }

    /// Why a job is refused before it is queued, if it is.
    private func refusal(of job: ThumbnailJob) -> ThumbnailError? {
        if job.source.isEmpty { return .notAnImage }
        if job.source.count > limits.maxSourceBytes { return .tooLarge }
        guard (1...Self.maxSide).contains(job.width), (1...Self.maxSide).contains(job.height) else {
            return .failed("thumbnail size \(job.width)×\(job.height) is outside 1…\(Self.maxSide)")
        }
        return nil
    }
}
