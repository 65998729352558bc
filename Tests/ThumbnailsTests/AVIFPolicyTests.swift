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

    /// Pre-warm's missed line sleeps while no reader is answered without an
    /// AVIF (it looked every 100 ms), and the first that is wakes it.
    @Test func theMissedLineSleepsUntilAReaderIsAnsweredWithout() async throws {
        let policy = AVIFPolicy(prewarmMakesMissed: true)
        let line = Task { await policy.nextMissed(limit: 3) }
        // Patience for a busy cooperative pool, not a measure of speed.
        let deadline = ContinuousClock.now + .seconds(60)
        while !policy.missedLineAsleep {
            try #require(ContinuousClock.now < deadline, "the line never went to sleep")
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(!policy.answeredWithout(Self.avif(9)))
        let woken = ContinuousClock.now + .seconds(60)
        while policy.missedLineAsleep {
            guard ContinuousClock.now < woken else {
                line.cancel()
                Issue.record("the line slept through a reader answered without an AVIF")
                return
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(await line.value == [Self.avif(9)], "woken with the one recorded")

        // Recorded before it asks: no sleep at all.
        _ = policy.answeredWithout(Self.avif(10))
        #expect(await policy.nextMissed(limit: 3) == [Self.avif(10)])
    }

    @Test func aCancelledMissedLineReturns() async {
        let policy = AVIFPolicy(prewarmMakesMissed: true)
        let line = Task { await policy.nextMissed(limit: 3) }
        line.cancel()
        #expect(await line.value.isEmpty, "a shutdown ends the line's sleep")
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
