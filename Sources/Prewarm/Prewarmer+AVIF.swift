import Thumbnails
import WarmfeedCore

/// Pre-warm's AVIF lines: a page's AVIF, and the AVIF readers were answered
/// without, made only while no page job needs the CPU. When AVIF is wanted,
/// and the lines' numbers, are Thumbnails' `AVIFPolicy`; pre-warm runs them.
extension Prewarmer {
    /// A page whose WebP is made, and the AVIF variants its readers take.
    struct AVIFPage: Sendable {
        var page: Page
        var variants: [ThumbnailVariant]
    }

    /// Makes the AVIF of pages whose WebP is made, one page at a time,
    /// `avifLine.atOnce` thumbnails at once, each started only while no page job
    /// is queued or running, and at background priority (behind every WebP in
    /// the libvips queue): with CPU to spare, never with the CPU a reader's
    /// lead needs. Made inside each page's job, AVIF, at nearly twice a WebP's
    /// CPU, held the lead back: pages took 2.8–4.3 s to warm instead of
    /// 1.3–1.9, and 80% of a tall screen's thumbnails were late at 3,000 px/s;
    /// on a line of its own but running beside the page jobs, a phone's 2x
    /// pages still took 4.2 s, and 19–26% of its thumbnails were late.
    func makeAVIF() async {
        for await next in avifPages {
            if Task.isCancelled { return }
            await makeThumbnails(of: next.page, variants: next.variants, atOnce: thumbnails.avifLine.atOnce) {
                await self.whenPagesWarm()
            }
            state.withLock { $0.avifPages.waiting -= 1 }
        }
    }

    /// Puts `page` on the AVIF line, counting it, and the page it pushes out when the line is full.
    func queueAVIF(_ page: AVIFPage) {
        state.withLock { state in
            // Under the lock, so the count never runs behind the line taking the page.
            switch avifPagesInput.yield(page) {
            case .enqueued: state.avifPages.waiting += 1
            case .dropped: state.avifPages.dropped += 1
            case .terminated: break
            @unknown default: break
            }
        }
    }

    /// Makes the AVIF readers were answered without (the WebP went instead:
    /// the thumbnail of the page they were on, whose job had ended before
    /// their browser was known to take AVIF, or whose AVIF the line let go),
    /// one at a time, as `makeAVIF` does: only while no page job needs the CPU.
    /// Asleep while no reader is answered without one (`nextMissedAVIF`).
    func makeMissedAVIF() async {
        while !Task.isCancelled {
            for key in await thumbnails.nextMissedAVIF() {
                await whenPagesWarm()
                if Task.isCancelled { return }
                await thumbnails.warm(key)
            }
        }
    }
}
