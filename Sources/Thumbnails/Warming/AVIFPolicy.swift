import ImageFormats
import Synchronization
import ThreadSlots
import WarmfeedCore

/// When AVIF is made, in one place: AVIF costs several times a WebP's CPU,
/// so it is made only while readers whose browsers take it are about, never
/// waited for by a browser that also takes WebP, and made with CPU to spare.
///
/// - Demand: a reader whose `Accept` takes AVIF opens a `DemandWindow`;
///   while it is open pre-warm makes AVIF beside WebP (`formats(at:)`).
/// - A reader answered with the WebP because the AVIF was not made yet
///   (`answeredWithout`): with pre-warm on, the AVIF goes into the request
///   thread's ring for pre-warm's missed-AVIF line (`takeMissed`); without
///   it, it is made now, behind all WebP work, at most `aheadLimit` at once.
/// - A browser that takes only AVIF waits for it, at pre-warm's pace, at most
///   `aheadLimit` at once (`reserveAhead`).
/// - Pre-warm's two AVIF lines (`Line`: a page's AVIF after its WebP, and
///   the missed ones) start each thumbnail only while no page job is queued
///   or running: on two shared cores AVIF's CPU was the lead's.
package final class AVIFPolicy: Sendable {
    /// Pre-warm's AVIF lines, as pre-warm runs them.
    package struct Line: Sendable {
        /// Pages whose AVIF wait their turn; when readers outrun AVIF, the
        /// pages waiting longest are let go (their readers get the WebP).
        package var pagesWaiting = 3
        /// AVIF thumbnails a page's line makes at once.
        package var atOnce = 2
        /// Missed AVIF taken at a time, the newest (older ones: their reader has scrolled on).
        package var missedAtOnce = 32
    }

    package static let line = Line()
    /// AVIF made for readers who were given the WebP, or waited for by a
    /// browser that takes only AVIF, at once at most: each holds its original
    /// while it waits behind every WebP in the libvips queue, and held
    /// originals count against the budget that lets readers' fetches go.
    static let aheadLimit = 4

    /// Readers whose browsers take AVIF.
    private let demand = DemandWindow()
    /// Whether the AVIF readers were answered without go to pre-warm, rather than being made at once.
    let prewarmMakesMissed: Bool
    /// The AVIF readers were answered without, for pre-warm (each written
    /// into the request thread's own ring: a stream's continuation was a lock
    /// every server thread took on a browser's thumbnail hits).
    private let missed = ThreadRings<MissedAVIF>(capacity: 32, slots: 64)
    /// Rung after each record in `missed`, so the missed line sleeps while
    /// there is none (`nextMissed`). It looked every 100 ms: an idle server
    /// made 60 voluntary switches a second with it, 21 without (bench/idle.sh).
    private let missedBell = Doorbell()
    /// AVIF on their way ahead of pre-warm, at most `aheadLimit`.
    private let ahead = Atomic<Int>(0)

    init(prewarmMakesMissed: Bool) {
        self.prewarmMakesMissed = prewarmMakesMissed
    }

    /// A reader's browser takes AVIF (at `now`, seconds of the service's clock).
    func noteDemand(at now: Double) { demand.note(at: now) }

    /// The formats pre-warm makes now: WebP always, AVIF while readers whose browsers take it are about.
    func formats(at now: Double) -> [ImageFormat] {
        demand.isOpen(at: now) ? [.webp, .avif] : [.webp]
    }

    /// A reader who takes AVIF was given the WebP: true when the caller is
    /// to make `avif` now (without pre-warm; `reserveAhead` taken, to be
    /// released when made); false when pre-warm will (it is in the ring), or
    /// `aheadLimit` are on their way already (the next reader asks again).
    func answeredWithout(_ avif: ThumbnailKey) -> Bool {
        if prewarmMakesMissed {
            _ = missed.record(MissedAVIF(avif))
            missedBell.ring()
            return false
        }
        return reserveAhead()
    }

    /// Takes one of the `aheadLimit` places; false when none is free.
    func reserveAhead() -> Bool {
        guard ahead.add(1, ordering: .relaxed).newValue <= Self.aheadLimit else {
            ahead.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Gives back a place `reserveAhead` took.
    func releaseAhead() { ahead.subtract(1, ordering: .relaxed) }

    /// The AVIF readers were answered without since the last call, each
    /// once, the newest `limit`. One caller at a time (pre-warm's line).
    func takeMissed(limit: Int) -> [ThumbnailKey] {
        var keys: [ThumbnailKey] = []
        missed.drain { keys.append($0.key) }
        var seen = Set<ThumbnailKey>()
        let newest = keys.reversed().filter { seen.insert($0).inserted }.prefix(limit)
        return newest.reversed()
    }

    /// What `takeMissed` gives, once there is something to give: sleeps
    /// until a reader is answered without an AVIF. Returns at once (maybe
    /// with none) when its task is cancelled, and after a ring whose record
    /// an earlier call took. One caller at a time (pre-warm's line).
    func nextMissed(limit: Int) async -> [ThumbnailKey] {
        var keys = takeMissed(limit: limit)
        guard keys.isEmpty else { return keys }
        await missedBell.wait(unless: {
            keys = takeMissed(limit: limit)
            return !keys.isEmpty
        })
        return keys.isEmpty ? takeMissed(limit: limit) : keys
    }

    /// Whether the missed line is asleep (or going to sleep) in `nextMissed`.
    var missedLineAsleep: Bool { missedBell.isArmed }
}
