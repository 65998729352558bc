import FeedPages
import Thumbnails
import WarmfeedCore

/// Readers' page views: recorded on the request's thread with no lock another
/// thread takes (`ReaderViews`), and replayed into the planner a few
/// milliseconds later, off the request path, under pre-warm's one lock.
extension Prewarmer {
    /// How long views wait in their rings before the planner hears of them:
    /// far shorter than a page takes to warm (hundreds of milliseconds), and
    /// one wake-up of the drain for every few hundred requests at full load.
    static let drainInterval: Duration = .milliseconds(10)

    /// Empty drains in a row after which the loop sleeps until a reader is
    /// recorded (`viewsBell`): 100 ms without one. Idle, the loop's 10 ms
    /// timer was 100 wake-ups a second, each three or four switches of threads.
    static let emptyDrainsBeforeSleep = 10

    /// A reader was served page `number` (asked for with `query`), whose
    /// neighbours are `older` and `newer`, at store revision `revision`, on a
    /// screen that loads thumbnails at `scale` (nil when it did not say:
    /// then the scales readers have been asking this node for). Recorded in
    /// this thread's ring: no lock, no wait, no allocation.
    package func readerViewed(
        _ reader: UInt64, number: Int, query: PageQuery? = nil, older: Cursor?, newer: Cursor?, revision: Int, scale: Int? = nil
    ) {
        views.record(
            ReaderView(
                reader: reader, number: number, target: query, older: older, newer: newer, revision: revision, scale: Int8(clamping: scale ?? 0)))
        viewsBell.ring()
    }

    /// Hands the views recorded since the last drain to the planner, in one
    /// decision: the scales and formats in demand are read once for all of
    /// them. Answers whether there were any.
    @discardableResult
    func drainViews() -> Bool {
        draining.withLock { _ in
            let drained = views.drain()
            guard !drained.isEmpty else { return false }
            let scales = thumbnails.scalesInDemand
            let formats = thumbnails.formatsInDemand
            let now = clock.now
            // Each view's variants, from the scale it said (1, 2) or the scales in demand (0): worked out once a drain.
            let bits = [scales, [1], [2]].map { ThumbnailVariant.bits(scales: $0, formats: formats) }
            decide { state in
                // One decision for the whole drain: the queue is looked over once, not once a view.
                state.planner.readersViewed(
                    drained.lazy.map { view in
                        let (older, newer) = Self.neighbours(older: view.older, newer: view.newer, number: view.number)
                        return Planner.View(
                            .reader(view.reader), page: view.number,
                            target: view.target.map { PageQuery(request: $0.request, number: view.number) }, older: older, newer: newer,
                            revision: view.revision,
                            variants: bits.indices.contains(Int(view.scale)) ? bits[Int(view.scale)] : 0, now: now)
                    })
            }
            return true
        }
    }

    /// Drains every `drainInterval` until shutdown, and sleeps while no reader comes.
    func drainViewsUntilShutdown() async {
        var empty = 0
        while !viewsStopped.load(ordering: .relaxed), !Task.isCancelled {
            try? await Task.sleep(for: Self.drainInterval)
            empty = drainViews() ? 0 : empty + 1
            if empty >= Self.emptyDrainsBeforeSleep {
                await viewsBell.wait(unless: { drainViews() })
                empty = 0
            }
        }
    }
}
