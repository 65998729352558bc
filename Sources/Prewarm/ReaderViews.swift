import FeedPages
import ThreadSlots
import WarmfeedCore

/// One page view, as a reader's request tells pre-warm of it: plain values,
/// copied into the request thread's own ring.
struct ReaderView: BitwiseCopyable {
    /// The reader's id (the `wf` cookie's 16 hex digits).
    var reader: UInt64
    /// The page's number.
    var number: Int
    /// How it was asked for, when by cursor.
    var target: PageQuery?
    /// The page's neighbours.
    var older: Cursor?
    var newer: Cursor?
    /// The store revision it was served at.
    var revision: Int
    /// The thumbnail scale the browser said its screen loads (`Sec-CH-DPR`); 0 when it did not.
    var scale: Int8
}

/// Readers' page views on their way to the planner, recorded without a lock:
/// a request writes its view into its own thread's ring (`ThreadRings`), and
/// pre-warm drains every ring a few milliseconds later under its own lock
/// (`Prewarmer.drainViews`). Before, each tracked page view took pre-warm's
/// lock, which every server thread takes: ~2 futex calls and up to a context
/// switch a request at `--threads 8`, and a fifth to two thirds of the
/// cookie-less rate. Views past a full ring are dropped and counted: a reader
/// views again within the next page, and the next view says where they are.
final class ReaderViews: Sendable {
    let rings: ThreadRings<ReaderView>
    /// Views recorded (0) and drained (1), per thread: what the stress test adds up.
    let counts = ThreadCounters(count: 2)

    /// Rings of 64 views a thread, drained every 10 ms: up to 6,400 views a
    /// second a thread reach the planner, hundreds of times what real readers
    /// send. Past that, under a bench's readers at ~500 pages a second each,
    /// halving the views heard from 128 a ring cut a reader's extra CPU a
    /// request from 1.4 to 0.3 µs at eight threads on one core (issue 35);
    /// Caffeine's read buffers hold 16.
    init(capacity: Int = 64, slots: Int = 64) {
        rings = ThreadRings(capacity: capacity, slots: slots)
    }

    /// Records `view` in this thread's ring; false when it was full (the view is dropped).
    @discardableResult
    func record(_ view: ReaderView) -> Bool {
        guard rings.record(view) else { return false }
        counts.add(0)
        return true
    }

    /// Every view waiting, oldest first within each thread's ring (one drainer at a time).
    func drain() -> [ReaderView] {
        var views: [ReaderView] = []
        rings.drain { views.append($0) }
        if !views.isEmpty { counts.add(1, views.count) }
        return views
    }

    /// Views recorded, drained, and dropped for a full ring, so far.
    var totals: (recorded: Int, drained: Int, dropped: Int) { (counts.value(0), counts.value(1), rings.dropped) }

}
