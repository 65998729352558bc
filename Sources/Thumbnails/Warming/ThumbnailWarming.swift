import ImageFormats
import WarmfeedCore

/// The front door pre-warm comes through: thumbnails made ahead of readers,
/// and what readers are asking for now. Thumbnails owns it and
/// `ThumbnailService` is its one implementation; pre-warm knows no concrete
/// type of this module.
///
/// The AVIF policy (`AVIFPolicy`) says which formats are in demand
/// (`formatsInDemand`), which AVIF readers were answered without
/// (`nextMissedAVIF`) and how pre-warm's AVIF lines run (`avifLine`);
/// pre-warm runs them when it has the CPU to spare.
package protocol ThumbnailWarming: Sendable {
    /// The key of `item`'s thumbnail in `variant`, as the store has it now; nil when it has no picture.
    func key(of item: FeedItem, _ variant: ThumbnailVariant) -> ThumbnailKey?

    /// Makes the thumbnail if nothing has it or is making it, and waits for
    /// the job it started; returns at once otherwise.
    func warm(_ key: ThumbnailKey, of item: FeedItem) async

    /// As `warm(_:of:)`, for a thumbnail known by its key alone (an AVIF a
    /// reader missed): the item is read when it must be made.
    func warm(_ key: ThumbnailKey) async

    /// The scales to make now: 1x always, 2x while readers on dense screens are about.
    var scalesInDemand: [Int] { get }

    /// The formats to make now: WebP always, AVIF while readers whose browsers take it are about.
    var formatsInDemand: [ImageFormat] { get }

    /// The AVIF readers were answered without since the last call, each once,
    /// the newest `limit` (older ones: their reader has scrolled on); while
    /// there are none, sleeps until a reader is answered without one. Returns
    /// at once when the caller's task is cancelled. One caller at a time.
    func nextMissedAVIF(limit: Int) async -> [ThumbnailKey]
}

extension ThumbnailWarming {
    /// The newest AVIF readers were answered without, as many as pre-warm takes at once.
    package func nextMissedAVIF() async -> [ThumbnailKey] { await nextMissedAVIF(limit: avifLine.missedAtOnce) }

    /// How pre-warm runs its AVIF lines (`AVIFPolicy.Line`).
    package var avifLine: AVIFPolicy.Line { AVIFPolicy.line }
}

/// In a cluster, who warms a page's thumbnails: the first node to claim the
/// page; the others find them in the shared tier. `SharedTier` keeps the claims.
package protocol PageWarmingClaims: Sendable {
    /// Whether this node warms page `page` (named by what it shows): the
    /// first node to ask does; one asking while another warms it waits
    /// (bounded) for that node, then is told no. True whenever the claims cannot be read.
    func claimPage(_ page: String) async -> Bool

    /// This node's thumbnails of `page` are made: the claim's holders may find them.
    func pageWarmed(_ page: String) async
}

extension ThumbnailService: ThumbnailWarming {}
extension SharedTier: PageWarmingClaims {}
