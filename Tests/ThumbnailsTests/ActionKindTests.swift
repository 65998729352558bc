import Testing
import WarmfeedCore

@testable import Thumbnails

/// Each of the machine's actions is classified once (`Action.kind`): the
/// service answers the quick ones at once, follows a job's own steps in one
/// task, and gives writes beside the job tasks of their own.
@Suite struct ActionKindTests {
    typealias State = ThumbnailCacheState<String, Int, String>

    let key = ThumbnailKey(picture: Picture(itemID: 1, tag: 0), variant: ThumbnailVariant(scale: 1, format: .webp))

    @Test func aJobsOwnStepsWritesBesideItAndQuickActionsAreToldApart() {
        let picture = key.picture
        let steps: [State.Action] = [
            .lookUp(key, tier: 0), .readItem(key), .readOriginal(picture: picture), .claimOriginal(picture: picture, tier: 0),
        ]
        #expect(steps.allSatisfy { $0.kind == .jobStep(urgent: nil) })
        #expect(State.Action.fetchOriginal(picture: picture, item: "item", urgent: true).kind == .jobStep(urgent: true))
        #expect(State.Action.resize(key, original: [], urgent: false).kind == .jobStep(urgent: false))
        #expect(State.Action.askOwner(key, owner: "node", urgent: false).kind == .jobStep(urgent: false))
        // What other nodes may wait on is not held back; what nobody waits on goes last.
        #expect(State.Action.originalFailed(picture: picture, seconds: 5, tier: 0).kind == .sideEffect(othersWait: true))
        #expect(State.Action.keepOriginal(picture: picture, bytes: [], owningIn: nil).kind == .sideEffect(othersWait: true))
        #expect(State.Action.store(key, bytes: [], tiers: [0]).kind == .sideEffect(othersWait: false))
        #expect(State.Action.forgetOwner(picture: picture, url: "http://node", tier: 0).kind == .sideEffect(othersWait: false))
        #expect(State.Action.answer([], .placeholder).kind == .quick)
        #expect(State.Action.release(["a", "b"]).kind == .quick)
    }
}
