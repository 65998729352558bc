import Thumbnailer
import WarmfeedCore

extension ThumbnailService {
    /// The memory between the origin and the thumbnails, into the operator's
    /// numbers: the bytes of originals fetched and not let go (`bodies`), and
    /// libvips' decodes (the thumbnailer's decode budget, the process's).
    func publishMemory(into stats: inout CacheStats) {
        let body = bodies.usage
        stats.origin.bodyBytes = body.onTheWireBytes + body.handedOverBytes
        (stats.origin.bodyBudgetBytes, stats.origin.bodyPeakBytes) = (body.limitBytes, body.peakBytes)
        (stats.origin.bodyPauses, stats.origin.bodyShed) = (body.pauses, body.shed)
        let decode = thumbnailer.decodeBudget.stats
        (stats.decode.budgetBytes, stats.decode.inUseBytes, stats.decode.peakBytes) = (decode.budgetBytes, decode.inUseBytes, decode.peakBytes)
        (stats.decode.running, stats.decode.waiting) = (decode.decoding, decode.waiting)
        (stats.decode.admitted, stats.decode.waited) = (decode.admitted, decode.waited)
        (stats.decode.refused, stats.decode.timedOut) = (decode.refused, decode.timedOut)
    }
}
