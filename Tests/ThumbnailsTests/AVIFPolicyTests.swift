import ImageFormats
import Testing
import WarmfeedCore

@testable import Thumbnails

/// When AVIF is made, all in `AVIFPolicy`: only while readers who take it
/// are about, the missed ones by pre-warm (newest first, each once), and
/// never more than `aheadLimit` on their way ahead of pre-warm.
@Suite struct AVIFPolicyTests {
    static func avif(_ id: Int64) -> ThumbnailKey {
        ThumbnailKey(picture: Picture(itemID: id, tag: 7), variant: ThumbnailVariant(scale: 1, format: .avif))
    }

    @Test func avifIsMadeOnlyWhileReadersWhoTakeItAreAbout() {
        let policy = AVIFPolicy(prewarmMakesMissed: true)
        #expect(policy.formats(at: 5) == [.webp])
        policy.noteDemand(at: 10)
        #expect(policy.formats(at: 11) == [.webp, .avif])
        #expect(policy.formats(at: 10 + DemandWindow.seconds + 1) == [.webp])
    }

    @Test func withPrewarmTheMissedGoToItsLineNewestFirstEachOnce() {
        let policy = AVIFPolicy(prewarmMakesMissed: true)
        for id in [1, 2, 1, 3, 4, 5] as [Int64] { #expect(!policy.answeredWithout(Self.avif(id)), "pre-warm makes it, not the caller") }
        // The newest three, each once, oldest of them first; the rest: their reader has scrolled on.
        #expect(policy.takeMissed(limit: 3) == [3, 4, 5].map(Self.avif))
        #expect(policy.takeMissed(limit: 3).isEmpty, "taken once")
    }

    @Test func withoutPrewarmTheCallerMakesThemAtMostAheadLimitAtOnce() {
        let policy = AVIFPolicy(prewarmMakesMissed: false)
        let made = (1...(AVIFPolicy.aheadLimit + 2)).map { policy.answeredWithout(Self.avif(Int64($0))) }
        #expect(made == Array(repeating: true, count: AVIFPolicy.aheadLimit) + [false, false])
        #expect(!policy.reserveAhead(), "a browser that takes only AVIF waits its turn too")
        policy.releaseAhead()
        #expect(policy.reserveAhead())
        #expect(policy.takeMissed(limit: 10).isEmpty, "nothing went to pre-warm")
    }
}
